import SubscriptionWire
import SubscriptionProtocol

/// The one point every command passes before its handler runs (mosquitto's `mosquitto_acl_check` before each
/// `handle__*`): a command the session may not send is answered with the error thrown here, and changes nothing.
///
/// Today: with `auth_token` set, only `HELLO`, `PING` and `QUIT` until `HELLO` has authenticated the session; and
/// the daemon's own numbers (first token `$SYS`, ``Names/isSystem(_:)``) may be subscribed to, never
/// created, removed or published to by a client (`DENIED`). The per-number permissions of shared/PROTOCOL.md
/// ("Users and permissions") belong here too.
enum CommandPolicy {
    /// Throws the error to answer when `session` may not run `command`.
    static func authorize(_ command: Command, for session: Session) throws(ProtocolError) {
        if !session.isAuthenticated {
            switch command {
            case .hello, .ping, .quit: break
            default: throw ProtocolError(.auth, "authentication required: send HELLO token=<secret> first")
            }
        }
        switch command {
        case .create(let number, _), .remove(let number), .publish(let number, _, _), .send(let number, _):
            if Names.isSystem(number) {
                throw ProtocolError(.denied, "'\(number)' belongs to the daemon: subscribe to it, do not write to it")
            }
        default:
            return
        }
    }
}
