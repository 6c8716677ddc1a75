import SubscriptionWire

/// A NATS server to connect to: host, port, and credentials given in its URL.
public struct NATSServerAddress: Hashable, Sendable, CustomStringConvertible {
    /// A name, an IPv4 address or an IPv6 address (without brackets).
    public var host: String
    /// The client port (4222 when not given).
    public var port: Int
    /// Credentials from the URL (`nats://user:pass@host`, `nats://token@host`); they take precedence over the
    /// client's options for this server.
    public var authentication: NATSAuthentication?

    /// NATS's client port.
    public static let defaultPort = 4222

    /// A server at `host:port`.
    public init(host: String, port: Int = NATSServerAddress.defaultPort, authentication: NATSAuthentication? = nil) {
        self.host = host
        self.port = port
        self.authentication = authentication
    }

    /// Reads `host`, `host:port`, `[ipv6]:port`, optionally after `nats://` and `user:password@` or `token@` (as
    /// given to a NATS client, or as INFO's `connect_urls` list them).
    public init(parsing text: String) throws(NATSError) {
        var rest = Substring(text)
        if rest.hasPrefix("nats://") { rest = rest.dropFirst("nats://".count) }
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        var authentication: NATSAuthentication?
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                authentication = .user(
                    String(userInfo[..<colon]), password: String(userInfo[userInfo.index(after: colon)...]))
            } else {
                guard !userInfo.isEmpty else { throw .invalidServer(text) }
                authentication = .token(String(userInfo))
            }
        }
        let address: ServerAddress
        do {
            address = try ServerAddress(parsing: String(rest), for: .connecting)
        } catch {
            throw .invalidServer(text)
        }
        guard case .tcp(let host, let port) = address else { throw .invalidServer(text) }
        // ServerAddress fills in subd's port when none is given; a NATS address without one means NATS's.
        let hasPort = rest.hasPrefix("[") ? rest.contains("]:") : rest.contains(":")
        self.init(host: host, port: hasPort ? port : Self.defaultPort, authentication: authentication)
    }

    /// `host:port` (`[host]:port` for IPv6), never the credentials.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
