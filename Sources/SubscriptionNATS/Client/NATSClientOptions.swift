/// How a ``NATSClient`` connects and keeps its connection.
public struct NATSClientOptions: Sendable {
    /// The connection's name in the server's monitoring.
    public var name: String?
    /// False: the server never hands the client its own publications back (`echo: false`). The cluster bridge
    /// runs with false: it delivers its own publications locally.
    public var echo: Bool
    /// Credentials for servers whose URL gives none.
    public var authentication: NATSAuthentication?
    /// How long one connection attempt may take, from `connect(2)` to the `PONG` that answers the handshake's
    /// `PING`.
    public var connectTimeout: Duration
    /// How long to wait before trying a server again that was tried less than this long ago.
    public var reconnectWait: Duration
    /// How many times in a row each server may fail before it is dropped from the list; nil: never (a daemon's
    /// bridge keeps trying). When every server is dropped, the client closes.
    public var maxReconnectAttempts: Int?
    /// How often the client PINGs the server to find a dead connection.
    public var pingInterval: Duration
    /// How many of the client's PINGs may be unanswered when the next is due; one more and the connection is
    /// considered dead (``NATSError/staleConnection``) and replaced.
    public var maxPingsOutstanding: Int
    /// The most bytes the client holds to send: frames waiting for the socket, and publications made while
    /// disconnected (sent after the reconnect). A publication that would pass it is refused.
    public var maxPendingBytes: Int
    /// False: the client does not learn servers from INFO's `connect_urls` (it uses only those given).
    public var discoverServers: Bool

    /// Options: echo on, 2 s to connect, 2 s between tries of one server, retrying forever, a PING every 2 minutes
    /// with 2 outstanding at most, 8 MiB of pending output, discovering servers.
    public init(
        name: String? = nil, echo: Bool = true, authentication: NATSAuthentication? = nil,
        connectTimeout: Duration = .seconds(2), reconnectWait: Duration = .seconds(2), maxReconnectAttempts: Int? = nil,
        pingInterval: Duration = .seconds(120), maxPingsOutstanding: Int = 2, maxPendingBytes: Int = 8 << 20,
        discoverServers: Bool = true
    ) {
        self.name = name
        self.echo = echo
        self.authentication = authentication
        self.connectTimeout = connectTimeout
        self.reconnectWait = reconnectWait
        self.maxReconnectAttempts = maxReconnectAttempts
        self.pingInterval = pingInterval
        self.maxPingsOutstanding = maxPingsOutstanding
        self.maxPendingBytes = maxPendingBytes
        self.discoverServers = discoverServers
    }
}
