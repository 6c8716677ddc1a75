/// A change in the client's connection, reported to ``NATSClient/onStatusChange``.
public enum NATSStatus: Equatable, Sendable {
    /// The handshake with a server is done (its PONG came): subscriptions were sent again and held publications
    /// released. Reported for the first connection and for every reconnection.
    case connected(server: NATSServerAddress, info: NATSServerInfo)
    /// An established connection was lost; the client is looking for a server again.
    case disconnected(reason: NATSError)
    /// The client stopped for good: ``NATSClient/close()`` (reason nil), or every server failed too often.
    case closed(reason: NATSError?)
}
