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
public enum CommandPolicy {
    /// What a verb needs before its handler runs: the policy's table, one row per verb. The switch has no `default`,
    /// so a verb added to ``Verb`` does not compile until it has its row: nothing is allowed by omission.
    public enum Requirement: Equatable, CaseIterable, Sendable {
        /// Nothing: allowed before authentication (`HELLO`, `PING`, `QUIT`).
        case nothing
        /// An authenticated session, no user right (`LIST`, `STATS`, `UNSUB`: they change nothing of anyone else's).
        case authenticated
        /// The user's `create_remove` right, on a number that is not the daemon's (`CREATE`, `REMOVE`).
        case createRemove
        /// The user's publish patterns permit the number, which is not the daemon's (`PUB`, `SEND`).
        case publish
        /// The user's subscribe patterns permit every number the pattern (or number) can match (`SUB`, `GET`).
        case subscribe

        /// The row of `verb`.
        @inlinable
        public static func of(_ verb: Verb) -> Requirement {
            switch verb {
            case .hello, .ping, .quit: return .nothing
            case .list, .stats, .unsub: return .authenticated
            case .create, .remove: return .createRemove
            case .pub, .send: return .publish
            case .sub, .get: return .subscribe
            }
        }
    }

    /// Throws the error to answer when `subject` (a session's client) may not run `command`: its verb's
    /// ``Requirement``.
    @inlinable
    public static func authorize(_ command: Command, for subject: ClientState) throws(ProtocolError) {
        let requirement = Requirement.of(command.verb)
        if requirement != .nothing && !subject.isAuthenticated { throw authenticationRequired }
        // The number or pattern the row is checked against, borrowed from the command (a copy would cost a retain
        // and a release per command).
        switch command {
        case .create(let number, _), .remove(let number), .publish(let number, _, _), .send(let number, _),
            .get(let number):
            try check(requirement, number, for: subject)
        case .subscribe(let pattern, _, _):
            try check(requirement, pattern, for: subject)
        case .hello, .unsubscribe, .list, .stats, .ping, .quit:
            return  // their rows (nothing, authenticated) name no number
        }
    }

    /// Checks the right `requirement` names on `target`.
    @usableFromInline
    static func check(_ requirement: Requirement, _ target: String, for subject: ClientState) throws(ProtocolError) {
        switch requirement {
        case .nothing, .authenticated:
            return
        case .createRemove:
            try checkNotSystem(target)
            if let rights = subject.rights, !rights.mayCreateAndRemove {
                throw ProtocolError(.denied, "user '\(rights.userName)' may not create or remove numbers")
            }
        case .publish:
            try checkNotSystem(target)
            if let rights = subject.rights, !rights.mayPublish(to: target) {
                throw ProtocolError(.denied, "user '\(rights.userName)' may not publish to '\(target)'")
            }
        case .subscribe:
            if let rights = subject.rights, !rights.maySubscribe(to: target) {
                throw ProtocolError(
                    .denied, "user '\(rights.userName)' may not subscribe to every number '\(target)' can match")
            }
        }
    }

    /// The error to answer for a malformed command (`error`, from the parser; `verb`, its line's verb, nil when the
    /// verb is unknown): before authentication, every command but `HELLO`, `PING` and `QUIT` is `AUTH`, malformed or
    /// not (docs/PROTOCOL.md, Order of checks); an error that closes the connection (`TOOBIG`, a broken payload frame)
    /// stays what it is.
    public static func screen(_ error: ProtocolError, verb: Verb?, for subject: ClientState) -> ProtocolError {
        guard !subject.isAuthenticated, !error.closesConnection else { return error }
        guard let verb, Requirement.of(verb) == .nothing else { return authenticationRequired }
        return error
    }

    /// What a session that has not authenticated gets for a command it may not send yet.
    public static let authenticationRequired = ProtocolError(
        .auth, "authentication required: send HELLO token=<secret> first")

    @usableFromInline
    static func checkNotSystem(_ number: String) throws(ProtocolError) {
        if Names.isSystem(number) {
            throw ProtocolError(.denied, "'\(number)' belongs to the daemon: subscribe to it, do not write to it")
        }
    }
}

extension Command {
    /// The command's verb.
    @inlinable
    public var verb: Verb {
        switch self {
        case .hello: return .hello
        case .create: return .create
        case .remove: return .remove
        case .subscribe: return .sub
        case .unsubscribe: return .unsub
        case .publish: return .pub
        case .send: return .send
        case .list: return .list
        case .get: return .get
        case .stats: return .stats
        case .ping: return .ping
        case .quit: return .quit
        }
    }
}
