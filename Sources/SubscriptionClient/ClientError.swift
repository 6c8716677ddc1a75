/// Everything that can go wrong between a ``SubscriptionClient`` and the server.
///
/// Each case carries what a person needs to act on it; ``description`` is one line of plain text.
public enum ClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The connection could not be made: the name did not resolve, nothing listens there, or the socket
    /// path does not exist. `reason` is lowercase text such as `connection refused`.
    case connectFailed(endpoint: String, reason: String)
    /// The connection ended (the server closed it, it broke, or ``SubscriptionClient/close()`` was called)
    /// before the reply came.
    case connectionLost
    /// The server answered `-ERR <code> <message>` (codes are listed in PROTOCOL.md, e.g. `NOTFOUND`).
    case server(code: String, message: String)
    /// The server sent bytes that do not follow the protocol; the connection is closed.
    case protocolViolation(String)
    /// An argument cannot be sent as it is (e.g. a number with a space or a line feed in it).
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .connectFailed(let endpoint, let reason): return "cannot connect to \(endpoint): \(reason)"
        case .connectionLost: return "the connection to the server was lost"
        case .server(let code, let message): return message.isEmpty ? code : "\(code) \(message)"
        case .protocolViolation(let what): return "protocol violation from the server: \(what)"
        case .invalidArgument(let what): return what
        }
    }
}
