/// What went wrong with a NATS call or connection.
public enum NATSError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A subject that breaks NATS's rules (empty token, space, a wildcard in a published subject).
    case invalidSubject(String, problem: NATSSubject.Problem)
    /// A queue group name with a space or control byte, or empty.
    case invalidQueue(String, problem: NATSSubject.Problem)
    /// A header name or value the wire cannot carry.
    case invalidHeader(name: String, problem: NATSSubject.Problem)
    /// A server address that cannot be read (`host:port`, `nats://[user:pass@]host:port`).
    case invalidServer(String)
    /// No server to connect to was given.
    case noServers
    /// A message larger than the server's `max_payload` (headers included): refused before sending.
    case payloadTooBig(size: Int, limit: Int)
    /// The outbound buffer (``NATSClientOptions/maxPendingBytes``) is full: the server does not take bytes as fast
    /// as they are published, or the client has been disconnected for a while.
    case outboundBufferFull(limit: Int)
    /// The call needs a connection and there is none now (a flush while reconnecting).
    case notConnected
    /// The client was closed.
    case closed
    /// No answer in time (a flush's PONG, a request's reply).
    case timeout
    /// A request nobody subscribes to (the server answered with status 503).
    case noResponders
    /// The server said `-ERR` (the text, e.g. `Authorization Violation`).
    case serverError(String)
    /// The server sent bytes the client cannot read.
    case protocolError(NATSProtocolError)
    /// The connection to a server could not be made or broke (the address and the reason).
    case connectionFailed(server: String, reason: String)
    /// The server did not answer the client's PINGs (``NATSClientOptions/maxPingsOutstanding`` of them).
    case staleConnection
    /// The server requires TLS, which this client does not speak.
    case tlsRequired(server: String)
    /// The server does not support headers (needed for `HPUB`).
    case headersNotSupported

    public var description: String {
        switch self {
        case .invalidSubject(let subject, let problem): return "invalid subject '\(subject)': \(problem)"
        case .invalidQueue(let queue, let problem): return "invalid queue group '\(queue)': \(problem)"
        case .invalidHeader(let name, let problem): return "invalid header '\(name)': \(problem)"
        case .invalidServer(let text): return "invalid server address '\(text)'"
        case .noServers: return "no NATS server given"
        case .payloadTooBig(let size, let limit):
            return "a \(size)-byte message is over the server's \(limit)-byte max_payload"
        case .outboundBufferFull(let limit): return "the outbound buffer is full (\(limit) bytes)"
        case .notConnected: return "not connected"
        case .closed: return "the client is closed"
        case .timeout: return "timed out"
        case .noResponders: return "no responders"
        case .serverError(let text): return "server error: \(text)"
        case .protocolError(let error): return "protocol error: \(error)"
        case .connectionFailed(let server, let reason): return "connection to \(server) failed: \(reason)"
        case .staleConnection: return "stale connection (no PONG)"
        case .tlsRequired(let server): return "\(server) requires TLS"
        case .headersNotSupported: return "the server does not support headers"
        }
    }
}
