/// What happened to the connection of a ``ReconnectingClient`` (``ReconnectingClient/events()``), for an application
/// that shows it or logs it. The client acts on each by itself; nothing here needs an answer.
public enum ConnectionEvent: Sendable, Equatable, CustomStringConvertible {
    /// Connected to the server, at first or again after a loss. Every observation and watch is subscribed again, and
    /// the commands held while disconnected have been sent, in the order they were made.
    case connected(Endpoint)
    /// The connection to the server ended with `error`. The client reconnects; commands made meanwhile wait in the
    /// outbound buffer; a command that was waiting for its reply failed with ``ClientError/connectionLost``.
    case disconnected(Endpoint, ClientError)
    /// An attempt to connect to the server failed; the next attempt, to the next server of the list, comes after
    /// `retryIn`.
    case attemptFailed(Endpoint, ClientError, retryIn: Duration)
    /// After a reconnection, subscribing to `pattern` again was refused (e.g. ``ClientError/notFound(_:)`` from a
    /// server that does not have the number); that observation or watch ends with the error.
    case restoreFailed(pattern: String, ClientError)
    /// ``ReconnectingClient/close()`` was called: the last event.
    case closed

    public var description: String {
        switch self {
        case .connected(let server): return "connected to \(server)"
        case .disconnected(let server, let error): return "lost \(server): \(error)"
        case .attemptFailed(let server, let error, let delay):
            let milliseconds = delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000
            return "attempt to connect to \(server) failed: \(error); next attempt in \(milliseconds) ms"
        case .restoreFailed(let pattern, let error): return "could not subscribe to '\(pattern)' again: \(error)"
        case .closed: return "closed"
        }
    }
}
