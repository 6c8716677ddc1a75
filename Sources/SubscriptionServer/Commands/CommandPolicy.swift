import SubscriptionProtocol

/// The one point every command passes before its handler runs (mosquitto's `mosquitto_acl_check` before each
/// `handle__*`): a command the session may not send is answered with the error thrown here, and changes nothing.
///
/// Today: with `auth_token` set, only `HELLO`, `PING` and `QUIT` until `HELLO` has authenticated the session. The
/// per-number permissions of shared/PROTOCOL.md ("Users and permissions") belong here too.
enum CommandPolicy {
    /// Throws the error to answer when `session` may not run `command`.
    static func authorize(_ command: Command, for session: Session) throws(ProtocolError) {
        guard !session.isAuthenticated else { return }
        switch command {
        case .hello, .ping, .quit:
            return
        default:
            throw ProtocolError(.auth, "authentication required: send HELLO token=<secret> first")
        }
    }
}
