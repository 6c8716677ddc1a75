import Dispatch
import SubscriptionProtocol
import SubscriptionWire

/// `HELLO [name=<client-name>] [token=<secret>]`: names the session (its `from=`) and, with `auth_token` or `users`
/// set, authenticates it.
///
/// - `HELLO name=<user> token=<secret>` of a configured user: the secret is checked against the stored hash on a
///   worker thread (a PBKDF2 takes milliseconds; the event loop goes on), while the session is held; then the
///   session has the user's rights and the user's name, which it cannot change (its `from=` is verified).
/// - `token=` equal to `auth_token`: every right, any name but a configured user's (the shared token works as it
///   always did).
/// - Once authenticated, a HELLO without a token only renames the session (not a user's session, and not to a
///   user's name: `DENIED`).
///
/// A failed HELLO (a wrong or missing secret, an unknown user) is counted (STATS `auth_failures`), logged at
/// warning with the peer's address, and slowed down: the session sits out `auth_failure_delay` times the number of
/// failures so far on this connection before its `-ERR AUTH` goes out and its next command runs; the
/// ``maxFailures``th failure closes the connection after its reply.
enum HelloCommand {
    /// The protocol version HELLO announces.
    static let protocolVersion = "1.1"
    /// Failed HELLOs after which the connection is closed.
    static let maxFailures = 10

    static func run(name: String?, token: String?, _ context: CommandContext) throws(ProtocolError) -> Reply {
        let session = context.session
        let server = context.server
        if let token {
            // The shared token first: whether it matches says nothing about the users.
            if let required = context.configuration.authToken, SecretComparison.equal(token, required) {
                if let name { try checkNotAnotherUsersName(name, context) }
                // A user's session that switches to the shared token does not keep the user's verified name.
                if session.rights != nil { session.name = nil }
                session.rights = nil
                session.isAuthenticated = true
                if let name { session.name = name }
                return welcome(session)
            }
            if let name, !server.users.isEmpty {
                verify(token, as: name, context)
                return .later
            }
            throw failed(ProtocolError(.auth, server.users.isEmpty ? "wrong token" : "wrong name or secret"), context)
        }
        if !session.isAuthenticated && server.requiresAuthentication {
            throw failed(ProtocolError(.auth, "this server needs HELLO [name=<user>] token=<secret>"), context)
        }
        if let name { try checkNotAnotherUsersName(name, context) }
        session.isAuthenticated = true
        if let name { session.name = name }
        return welcome(session)
    }

    /// A session may not take a configured user's name unless it logged in as that user (so `from=<user>` is always
    /// verified), and a user's session keeps its own name.
    private static func checkNotAnotherUsersName(_ name: String, _ context: CommandContext) throws(ProtocolError) {
        if let rights = context.session.rights {
            guard name == rights.user.name else {
                throw ProtocolError(.denied, "a session of user '\(rights.user.name)' keeps its name")
            }
        } else if context.server.users[ExactName(name)] != nil {
            throw ProtocolError(.denied, "'\(name)' is a user's name: HELLO name=\(name) token=<that user's secret>")
        }
    }

    /// The reply to a successful HELLO.
    static func welcome(_ session: Session) -> Reply {
        .ok("subd \(SubdVersion.current) proto=\(protocolVersion) session=\(session.id)")
    }

    /// Checks `secret` as the secret of the user `name`, off the event loop, holding the session meanwhile; then
    /// answers. A name that is no user's is checked against a stand-in hash, so the answer takes as long either way
    /// (the timing does not tell which names are users). One check at a time, on ``verifyQueue``: however many
    /// connections send HELLOs, they cost at most one core.
    private static func verify(_ secret: String, as name: String, _ context: CommandContext) {
        let session = context.session
        let server = context.server
        let user = server.users[ExactName(name)]
        let hash = user?.secret ?? standInHash
        session.hold()
        verifyQueue.async {
            let matches = hash?.verify(secret) == true && user != nil
            server.queue.async {
                guard session.machine.phase != .closed else { return }
                // A reload may have changed the user while the check ran: the secret that was checked must still be
                // the user's, and the rights granted are the current ones.
                if matches, let user, let current = server.users[ExactName(name)], current.secret == user.secret {
                    session.isAuthenticated = true
                    session.rights = UserRights(current)
                    session.name = current.name
                    session.queue(welcome(session))
                    session.release()
                } else {
                    let context = CommandContext(session: session, server: server)
                    session.queueError(failed(ProtocolError(.auth, "wrong name or secret"), context, held: true))
                }
                server.loop.endOfTurn()
            }
        }
    }

    /// Where users' secrets are checked, one at a time.
    private static let verifyQueue = DispatchQueue(label: "subd.verify-secret")

    /// The hash an unknown name's secret is checked against (made once, with a random salt and the default cost).
    private static let standInHash: SecretHash? = try? SecretHash.make(secret: "stand-in")

    /// Counts, logs and slows down a failed HELLO (or closes the connection at the last allowed failure); returns the
    /// error to answer. `held`: the session is held already (its secret was being checked).
    static func failed(_ error: ProtocolError, _ context: CommandContext, held: Bool = false) -> ProtocolError {
        let session = context.session
        session.authFailures += 1
        context.server.stats.authFailures += 1
        context.server.logger.warning(
            "HELLO failed: \(error.message)",
            metadata: [
                "session": "\(session.id)", "address": "\(session.peerAddress)",
                "failures": "\(session.authFailures)",
            ])
        if session.authFailures >= maxFailures {
            session.requestClose(.authFailures)
            if held { session.release() }
            return ProtocolError(.auth, "\(error.message); \(maxFailures) failures: closing the connection")
        }
        if !held { session.hold() }
        session.release(after: context.configuration.authFailureDelay * Double(session.authFailures))
        return error
    }
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
