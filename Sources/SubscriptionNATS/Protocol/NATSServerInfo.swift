/// The fields of the server's `INFO` the client uses.
public struct NATSServerInfo: Equatable, Sendable {
    /// The server's unique id.
    public var serverID: String
    /// Its configured name (`server_name`), or its id.
    public var serverName: String
    /// Its version, e.g. `2.9.10`.
    public var version: String
    /// The largest message (headers and payload) it accepts.
    public var maxPayload: Int
    /// True when it supports headers (`HPUB`/`HMSG`).
    public var supportsHeaders: Bool
    /// True when it requires credentials.
    public var authRequired: Bool
    /// True when it requires TLS (this client speaks plain TCP only).
    public var tlsRequired: Bool
    /// The other servers of its cluster that clients may use (`HOST:PORT`).
    public var connectURLs: [String]
    /// True when JetStream is enabled.
    public var jetStream: Bool
    /// True when the server is in lame duck mode (about to shut down: move elsewhere).
    public var lameDuckMode: Bool
    /// The client id the server gave this connection.
    public var clientID: UInt64?

    /// The server's default `max_payload`, assumed until an `INFO` says otherwise.
    public static let defaultMaxPayload = 1_048_576

    /// Facts as given.
    public init(
        serverID: String = "", serverName: String = "", version: String = "",
        maxPayload: Int = NATSServerInfo.defaultMaxPayload, supportsHeaders: Bool = true, authRequired: Bool = false,
        tlsRequired: Bool = false, connectURLs: [String] = [], jetStream: Bool = false, lameDuckMode: Bool = false,
        clientID: UInt64? = nil
    ) {
        self.serverID = serverID
        self.serverName = serverName
        self.version = version
        self.maxPayload = maxPayload
        self.supportsHeaders = supportsHeaders
        self.authRequired = authRequired
        self.tlsRequired = tlsRequired
        self.connectURLs = connectURLs
        self.jetStream = jetStream
        self.lameDuckMode = lameDuckMode
        self.clientID = clientID
    }

    /// Reads the JSON of an `INFO` line. Missing fields take their defaults; `max_payload` must be positive.
    public init(json bytes: UnsafeRawBufferPointer) throws(NATSProtocolError) {
        let wire: Wire
        do throws(JSONCoding.Failure) {
            wire = try JSONCoding.decode(Wire.self, from: bytes)
        } catch {
            throw .badInfo(error.description)
        }
        let maxPayload = wire.maxPayload ?? Self.defaultMaxPayload
        guard maxPayload > 0 else { throw .badInfo("max_payload \(maxPayload) is not positive") }
        self.init(
            serverID: wire.serverID ?? "", serverName: wire.serverName ?? wire.serverID ?? "",
            version: wire.version ?? "", maxPayload: maxPayload, supportsHeaders: wire.headers ?? false,
            authRequired: wire.authRequired ?? false, tlsRequired: wire.tlsRequired ?? false,
            connectURLs: wire.connectURLs ?? [], jetStream: wire.jetStream ?? false, lameDuckMode: wire.ldm ?? false,
            clientID: wire.clientID)
    }

    /// The members of `INFO` the client reads, as nats-server names them; the others are ignored.
    private struct Wire: Decodable {
        var serverID: String?
        var serverName: String?
        var version: String?
        var maxPayload: Int?
        var headers: Bool?
        var authRequired: Bool?
        var tlsRequired: Bool?
        var connectURLs: [String]?
        var jetStream: Bool?
        var ldm: Bool?
        var clientID: UInt64?

        private enum CodingKeys: String, CodingKey {
            case version, headers, ldm
            case serverID = "server_id"
            case serverName = "server_name"
            case maxPayload = "max_payload"
            case authRequired = "auth_required"
            case tlsRequired = "tls_required"
            case connectURLs = "connect_urls"
            case jetStream = "jetstream"
            case clientID = "client_id"
        }
    }
}
