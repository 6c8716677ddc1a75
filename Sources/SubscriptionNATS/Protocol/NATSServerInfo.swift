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
        let value: JSONValue
        do {
            value = try JSONReader.parse(bytes)
        } catch {
            throw .badInfo(error.description)
        }
        guard case .object = value else { throw .badInfo("not a JSON object") }
        let maxPayload = value["max_payload"]?.int ?? Self.defaultMaxPayload
        guard maxPayload > 0 else { throw .badInfo("max_payload \(maxPayload) is not positive") }
        self.init(
            serverID: value["server_id"]?.string ?? "",
            serverName: value["server_name"]?.string ?? value["server_id"]?.string ?? "",
            version: value["version"]?.string ?? "",
            maxPayload: maxPayload,
            supportsHeaders: value["headers"]?.bool ?? false,
            authRequired: value["auth_required"]?.bool ?? false,
            tlsRequired: value["tls_required"]?.bool ?? false,
            connectURLs: value["connect_urls"]?.array?.compactMap(\.string) ?? [],
            jetStream: value["jetstream"]?.bool ?? false,
            lameDuckMode: value["ldm"]?.bool ?? false,
            clientID: value["client_id"]?.uint64)
    }
}
