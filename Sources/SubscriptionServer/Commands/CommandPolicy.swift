import SubscriptionProtocol
import SubscriptionWire

/// The one point every command passes before its handler runs (mosquitto's `mosquitto_acl_check` before each
/// `handle__*`): a command the session may not send is answered with the error thrown here, and changes nothing.
///
/// - With `auth_token` or `users` set, only `HELLO`, `PING` and `QUIT` until `HELLO` has authenticated the session
///   (`AUTH`), malformed commands included (``screen(_:verb:for:)``).
/// - A user's session (docs/PROTOCOL.md, Users and permissions) may `CREATE`/`REMOVE` only with the right,
///   `PUB`/`SEND` only to numbers its publish patterns permit, `SUB` only patterns whose every number its subscribe
///   patterns permit, and `GET` only numbers it may subscribe to (`DENIED`; a PUB's payload was read already).
/// - The daemon's own numbers (first token `$SYS`, ``Names/isSystem(_:)``) may be subscribed to, never created,
///   removed or published to by a client (`DENIED`).
enum CommandPolicy {
    /// Throws the error to answer when `session` may not run `command`.
    static func authorize(_ command: Command, for session: Session) throws(ProtocolError) {
        if !session.isAuthenticated {
            switch command {
            case .hello, .ping, .quit: break
            default: throw authenticationRequired
            }
        }
        switch command {
        case .create(let number, _), .remove(let number):
            try checkNotSystem(number)
            if let rights = session.rights, !rights.user.mayCreateAndRemove {
                throw ProtocolError(.denied, "user '\(rights.user.name)' may not create or remove numbers")
            }
        case .publish(let number, _, _), .send(let number, _):
            try checkNotSystem(number)
            if let rights = session.rights, !rights.mayPublish(to: number) {
                throw ProtocolError(.denied, "user '\(rights.user.name)' may not publish to '\(number)'")
            }
        case .subscribe(let pattern, _, _), .get(let pattern):
            if let rights = session.rights, !rights.maySubscribe(to: pattern) {
                throw ProtocolError(
                    .denied, "user '\(rights.user.name)' may not subscribe to every number '\(pattern)' can match")
            }
        default:
            return
        }
    }

    /// The error to answer for a malformed command (`error`, from the parser; `verb`, its line's verb, nil when the
    /// verb is unknown): before authentication, every command but `HELLO`, `PING` and `QUIT` is `AUTH`, malformed or
    /// not (docs/PROTOCOL.md, Order of checks); an error that closes the connection (`TOOBIG`, a broken payload frame)
    /// stays what it is.
    static func screen(_ error: ProtocolError, verb: Verb?, for session: Session) -> ProtocolError {
        guard !session.isAuthenticated, !error.closesConnection else { return error }
        switch verb {
        case .hello, .ping, .quit: return error
        default: return authenticationRequired
        }
    }

    /// What a session that has not authenticated gets for a command it may not send yet.
    private static let authenticationRequired = ProtocolError(
        .auth, "authentication required: send HELLO token=<secret> first")

    private static func checkNotSystem(_ number: String) throws(ProtocolError) {
        if Names.isSystem(number) {
            throw ProtocolError(.denied, "'\(number)' belongs to the daemon: subscribe to it, do not write to it")
        }
    }
}
