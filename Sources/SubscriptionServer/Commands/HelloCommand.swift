import SubscriptionProtocol

/// `HELLO [name=<client-name>] [token=<secret>]`: names the session (its `from=`) and, with `auth_token` set,
/// authenticates it. Once authenticated, a HELLO without a token only renames it.
enum HelloCommand {
    /// The protocol version HELLO announces.
    static let protocolVersion = "1.1"

    static func run(name: String?, token: String?, _ context: CommandContext) throws(ProtocolError) -> Reply {
        let session = context.session
        if let required = context.configuration.authToken {
            if let token, !SecretComparison.equal(token, required) { throw ProtocolError(.auth, "wrong token") }
            if token == nil && !session.isAuthenticated {
                throw ProtocolError(.auth, "this server needs HELLO token=<secret>")
            }
        }
        session.isAuthenticated = true
        if let name { session.name = name }
        return .ok("subd \(SubdVersion.current) proto=\(protocolVersion) session=\(session.id)")
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
