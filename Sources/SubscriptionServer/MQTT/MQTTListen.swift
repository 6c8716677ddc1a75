import SubscriptionWire

/// A `listen` entry served with MQTT 3.1.1 and 5.0 (docs/PROTOCOL.md, "MQTT"): `mqtt://HOST:PORT`, or
/// `mqtts://HOST:PORT` with TLS (the `tls_cert` and `tls_key` of `tls://` listeners). MQTT over WebSocket needs no
/// entry of its own: every `ws://` and `wss://` listener serves it to a client that asks for the subprotocol `mqtt`.
public struct MQTTListen: Equatable, Sendable, CustomStringConvertible {
    /// The TCP address.
    public var address: ListenAddress
    /// True for `mqtts://`.
    public var isTLS: Bool

    /// The scheme of a plain MQTT entry.
    public static let scheme = "mqtt://"
    /// The scheme of an MQTT entry over TLS.
    public static let tlsScheme = "mqtts://"
    /// MQTT's registered port, the one the documentation's examples use (`mqtt://127.0.0.1:1883`).
    public static let defaultPort = 1883
    /// MQTT over TLS's registered port.
    public static let defaultTLSPort = 8883

    /// An MQTT listener on `address`.
    public init(address: ListenAddress, isTLS: Bool = false) {
        self.address = address
        self.isTLS = isTLS
    }

    /// Parses `mqtt://HOST:PORT` or `mqtts://HOST:PORT`; nil for text with neither scheme. The address follows the
    /// rules of every `listen` entry and must be TCP.
    public init?(parsing text: String, key: String = "listen") throws(ConfigurationError) {
        let isTLS = text.hasPrefix(Self.tlsScheme)
        guard isTLS || text.hasPrefix(Self.scheme) else { return nil }
        let rest = String(text.dropFirst(isTLS ? Self.tlsScheme.count : Self.scheme.count))
        let address = try ListenAddress(parsing: rest, key: key)
        guard case .tcp = address else {
            throw ConfigurationError(key: key, problem: "'\(text)': an MQTT listener takes a TCP address HOST:PORT")
        }
        self.init(address: address, isTLS: isTLS)
    }

    /// The entry as written in `listen`, e.g. `mqtt://127.0.0.1:1883`.
    public var entry: String { (isTLS ? Self.tlsScheme : Self.scheme) + address.endpoint }

    public var description: String { entry }
}

/// `mqtt_create`: what a publication or an exact subscription of an MQTT client to a number that does not exist does
/// (MQTT clients have no `CREATE`).
public enum MQTTCreatePolicy: String, Sendable, Equatable {
    /// The number is created, plain (retained for a publication with the RETAIN flag), as a `CREATE` would, and
    /// `$SYS.number.created` says so.
    case auto
    /// Refused: MQTT 5.0's reason code 0x83 with a reason string; for 3.1.1 what the specification allows (a
    /// subscription's failure return code; a publication acknowledged and dropped).
    case never
}

/// The `mqtt_*` keys (docs/PROTOCOL.md, "MQTT", and config/subd.yaml).
public struct MQTTSettings: Sendable, Equatable {
    /// `mqtt_create`.
    public var create = MQTTCreatePolicy.auto
    /// `mqtt_session_expiry`: the longest a session of a disconnected client is kept, in seconds (a 3.1.1 client's
    /// persistent session, a 5.0 client's Session Expiry Interval, capped to it); 0 keeps none.
    public var sessionExpiryMax = 86_400
    /// `mqtt_receive_maximum`: how many QoS 1 and 2 publications one client may have unacknowledged towards subd
    /// (CONNACK's Receive Maximum; a client past it is disconnected, 0x93).
    public var receiveMaximum = 1_024
    /// `mqtt_topic_alias_maximum`: how many topic aliases a 5.0 client may set towards subd (CONNACK's Topic Alias
    /// Maximum); 0 for none.
    public var topicAliasMaximum = 64
    /// `mqtt_keepalive_max`: the longest keepalive a client may ask for, in seconds (a longer or no keepalive is
    /// lowered to it: 5.0's Server Keep Alive; 3.1.1 clients are held to it silently); 0 for no limit.
    public var keepAliveMax = 0

    public init() {}
}
