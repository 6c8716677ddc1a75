import SubscriptionWire

/// Everything that can go wrong between a ``SubscriptionClient`` and the server.
///
/// Each case carries what a person needs to act on it; ``description`` is one line of plain text. A server refusal is
/// one case per error code of the protocol (``notFound(_:)``, ``denied(_:)``, ...), carrying the server's text;
/// ``code`` gives the ``ErrorCode`` back. Callers compare cases, never strings.
///
/// ```swift
/// do {
///     try await client.post("ORDERS", text: "one")
/// } catch .notFound {
///     try await client.create("ORDERS")
/// } catch .denied(let why) {
///     print("not allowed:", why)
/// }
/// ```
public enum ClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The connection could not be made: the name did not resolve, nothing listens there, or the socket
    /// path does not exist. `reason` is lowercase text such as `connection refused`.
    case connectFailed(endpoint: String, reason: String)
    /// The connection ended (the server closed it, it broke, or ``SubscriptionClient/close()`` was called)
    /// before the reply came.
    case connectionLost
    /// `-ERR PROTO`: a malformed command, or `GET`/`watch` of a number that is not retained.
    case proto(String)
    /// `-ERR UNKNOWN`: the server does not know the verb (an older server).
    case unknown(String)
    /// `-ERR NAME`: the server refused a number or pattern.
    case name(String)
    /// `-ERR NOTFOUND`: no such number (create it first).
    case notFound(String)
    /// `-ERR TOOBIG`: a line or payload over the server's limit; the server closed the connection.
    case tooBig(String)
    /// `-ERR AUTH`: authentication is required or failed (the `name`/`token` of `HELLO`).
    case auth(String)
    /// `-ERR DENIED`: the user may not do this (its publish or subscribe patterns, or create/remove rights).
    case denied(String)
    /// `-ERR LIMIT`: a configured limit of the server was reached (connections, subscriptions, numbers).
    case limit(String)
    /// No reply within the request timeout (``ReconnectingClient/Options/requestTimeout``). A command that was still
    /// waiting to be sent was not sent; one that was sent may or may not have been carried out.
    case timeout(verb: String, after: Duration)
    /// The command was made while the client was disconnected and the outbound buffer, which holds such commands
    /// until the next connection, has no room for its `bytes` (``ReconnectingClient/Options/outboundBufferLimit``).
    /// Nothing was sent, nor will be.
    case outboundBufferFull(bytes: Int, limit: Int)
    /// The server sent bytes that do not follow the protocol; the connection is closed.
    case protocolViolation(String)
    /// A number or pattern breaks the name rules (docs/PROTOCOL.md, Words); nothing was sent.
    case invalidName(String, Names.Problem)
    /// A client name (`name`, `from`) breaks the client-name rule; nothing was sent.
    case invalidClientName(String, ClientName.Problem)
    /// A queue group name (`SUB ... group=`) breaks the client-name rule; nothing was sent.
    case invalidGroupName(String, ClientName.Problem)
    /// The token breaks the token rule (it is not repeated here: it is a secret); nothing was sent.
    case invalidToken(ClientName.Problem)
    /// The info pairs of a publication break the rules of docs/PROTOCOL.md, Info pairs; nothing was sent.
    case invalidInfo(InfoPair.Problem)
    /// Another argument cannot be used as it is (e.g. no pattern to subscribe to).
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .connectFailed(let endpoint, let reason): return "cannot connect to \(endpoint): \(reason)"
        case .connectionLost: return "the connection to the server was lost"
        case .proto(let message), .unknown(let message), .name(let message), .notFound(let message),
            .tooBig(let message), .auth(let message), .denied(let message), .limit(let message):
            let code = self.code?.rawValue ?? ""
            return message.isEmpty ? code : "\(code) \(message)"
        case .timeout(let verb, let after): return "no reply to \(verb) within \(after)"
        case .outboundBufferFull(let bytes, let limit):
            return "not connected, and the outbound buffer has no room for \(bytes) more bytes (limit \(limit))"
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

extension ClientError {
    /// The server's refusal `-ERR <code> <message>` as its case.
    public static func server(code: ErrorCode, message: String) -> ClientError {
        switch code {
        case .proto: return .proto(message)
        case .unknown: return .unknown(message)
        case .name: return .name(message)
        case .notFound: return .notFound(message)
        case .tooBig: return .tooBig(message)
        case .auth: return .auth(message)
        case .denied: return .denied(message)
        case .limit: return .limit(message)
        }
    }

    /// The protocol's error code of a server refusal; nil for every other error.
    public var code: ErrorCode? {
        switch self {
        case .proto: return .proto
        case .unknown: return .unknown
        case .name: return .name
        case .notFound: return .notFound
        case .tooBig: return .tooBig
        case .auth: return .auth
        case .denied: return .denied
        case .limit: return .limit
        default: return nil
        }
    }

    /// The server's text of a refusal; nil for every other error.
    public var serverMessage: String? {
        switch self {
        case .proto(let message), .unknown(let message), .name(let message), .notFound(let message),
            .tooBig(let message), .auth(let message), .denied(let message), .limit(let message):
            return message
        default:
            return nil
        }
    }
}
