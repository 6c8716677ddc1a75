import SubscriptionWire

/// Everything that can go wrong between a ``SubscriptionClient`` and the server.
///
/// Each case carries what a person needs to act on it; ``description`` is one line of plain text. Server refusals
/// carry the protocol's ``ErrorCode``, so callers compare codes, never strings.
public enum ClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The connection could not be made: the name did not resolve, nothing listens there, or the socket
    /// path does not exist. `reason` is lowercase text such as `connection refused`.
    case connectFailed(endpoint: String, reason: String)
    /// The connection ended (the server closed it, it broke, or ``SubscriptionClient/close()`` was called)
    /// before the reply came.
    case connectionLost
    /// The server answered `-ERR <code> <message>` (shared/PROTOCOL.md, "Error codes").
    case server(code: ErrorCode, message: String)
    /// The server sent bytes that do not follow the protocol; the connection is closed.
    case protocolViolation(String)
    /// A number or pattern breaks the name rules (shared/PROTOCOL.md, "Words"); nothing was sent.
    case invalidName(String, Names.Problem)
    /// A client name (`name`, `from`) breaks the client-name rule; nothing was sent.
    case invalidClientName(String, ClientName.Problem)
    /// A queue group name (`SUB ... group=`) breaks the client-name rule; nothing was sent.
    case invalidGroupName(String, ClientName.Problem)
    /// The token breaks the token rule (it is not repeated here: it is a secret); nothing was sent.
    case invalidToken(ClientName.Problem)
    /// The info pairs of a publication break the rules of "Version 1.1 / Info pairs"; nothing was sent.
    case invalidInfo(InfoPair.Problem)
    /// Another argument cannot be used as it is (e.g. no pattern to subscribe to).
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .connectFailed(let endpoint, let reason): return "cannot connect to \(endpoint): \(reason)"
        case .connectionLost: return "the connection to the server was lost"
        case .server(let code, let message): return message.isEmpty ? code.rawValue : "\(code.rawValue) \(message)"
        case .protocolViolation(let what): return "protocol violation from the server: \(what)"
        case .invalidName(let name, let problem): return "invalid name '\(name)': it \(problem)"
        case .invalidClientName(let name, let problem): return "invalid client name '\(name)': it \(problem)"
        case .invalidGroupName(let name, let problem): return "invalid group name '\(name)': it \(problem)"
        case .invalidToken(let problem): return "invalid token: it \(problem)"
        case .invalidInfo(let problem): return "invalid info pairs: \(problem)"
        case .invalidArgument(let what): return what
        }
    }
}
