import SubscriptionProtocol

/// `HELLO [name=<client-name>] [token=<secret>]`: names the session (its `from=`) and, with `auth_token` set,
/// authenticates it. Once authenticated, a HELLO without a token only renames it.
///
/// A failed HELLO (a wrong or missing secret) is counted (STATS `auth_failures`), logged at warning with the peer's
/// address, and slowed down: the session sits out `auth_failure_delay` times the number of failures so far on this
/// connection before its `-ERR AUTH` goes out and its next command runs; the ``maxFailures``th failure closes the
/// connection after its reply.
enum HelloCommand {
    /// The protocol version HELLO announces.
    static let protocolVersion = "1.1"
    /// Failed HELLOs after which the connection is closed.
    static let maxFailures = 10

    static func run(name: String?, token: String?, _ context: CommandContext) throws(ProtocolError) -> Reply {
        let session = context.session
        if let required = context.configuration.authToken {
            if let token, !SecretComparison.equal(token, required) {
                throw failed(ProtocolError(.auth, "wrong token"), context)
            }
            if token == nil && !session.isAuthenticated {
                throw failed(ProtocolError(.auth, "this server needs HELLO token=<secret>"), context)
            }
        }
        session.isAuthenticated = true
        if let name { session.name = name }
        return .ok("subd \(SubdVersion.current) proto=\(protocolVersion) session=\(session.id)")
    }

    /// Counts, logs and slows down a failed HELLO (or closes the connection at the last allowed failure); returns the
    /// error to answer.
    static func failed(_ error: ProtocolError, _ context: CommandContext) -> ProtocolError {
        let session = context.session
        session.authFailures += 1
        context.server.stats.authFailures += 1
        context.server.logger.warning(
            "HELLO failed: \(error.message)",
            metadata: ["session": "\(session.id)", "address": "\(session.peerAddress)",
                       "failures": "\(session.authFailures)"])
        if session.authFailures >= maxFailures {
            session.requestClose(.authFailures)
            return ProtocolError(.auth, "\(error.message); \(maxFailures) failures: closing the connection")
        }
        session.sitOut(seconds: failureDelay * Double(session.authFailures))
        return error
    }

    /// Seconds added to the delay by each failure on a connection.
    static var failureDelay: Double { 0.5 }
}

/// Compares secrets in time that does not depend on where they differ.
enum SecretComparison {
    /// True when `given` and `expected` are the same bytes; the time taken depends only on their lengths.
    static func equal(_ given: String, _ expected: String) -> Bool {
        let left = Array(given.utf8)
        let right = Array(expected.utf8)
        var difference = UInt8(left.count == right.count ? 0 : 1)
        for index in 0..<max(left.count, right.count) {
            difference |= (index < left.count ? left[index] : 0) ^ (index < right.count ? right[index] : 0)
        }
        return difference == 0
    }
}
