/// MQTT 3.1.1 (OASIS, 2014) and MQTT 5.0 (OASIS, 2019) control packets as plain values: what
/// ``MQTTDecoder`` makes of the bytes a peer sends and what ``MQTTEncoder`` turns into bytes. Both directions are
/// modelled (a server decodes CONNECT and encodes CONNACK, a test client the reverse), so every packet can be
/// encoded and decoded back.
///
/// Strings are the packets' UTF-8 strings, checked when decoded (well-formed UTF-8, no U+0000); binary data stays
/// bytes. A field that exists in MQTT 5.0 only (properties, reason codes of acknowledgements) is ignored when the
/// packet is encoded for 3.1.1, and is its default when it is decoded from 3.1.1.

/// The protocol level a client's CONNECT names, which decides how every later packet is read and written.
public enum MQTTVersion: UInt8, Sendable, Hashable, CustomStringConvertible {
    /// MQTT 3.1.1: protocol name `MQTT`, level 4.
    case v311 = 4
    /// MQTT 5.0: protocol name `MQTT`, level 5.
    case v5 = 5

    public var description: String { self == .v311 ? "3.1.1" : "5.0" }
}

/// A quality of service level.
public enum MQTTQoS: UInt8, Sendable, Hashable, Comparable {
    /// At most once.
    case atMostOnce = 0
    /// At least once (PUBACK).
    case atLeastOnce = 1
    /// Exactly once (PUBREC, PUBREL, PUBCOMP).
    case exactlyOnce = 2

    public static func < (lhs: MQTTQoS, rhs: MQTTQoS) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The type of a control packet: the high 4 bits of its first byte.
public enum MQTTPacketType: UInt8, Sendable, Hashable {
    case connect = 1
    case connack = 2
    case publish = 3
    case puback = 4
    case pubrec = 5
    case pubrel = 6
    case pubcomp = 7
    case subscribe = 8
    case suback = 9
    case unsubscribe = 10
    case unsuback = 11
    case pingreq = 12
    case pingresp = 13
    case disconnect = 14
    /// MQTT 5.0 only.
    case auth = 15
}

/// One user property (MQTT 5.0): a name and a value, both UTF-8 strings. A packet may carry several, in order, the
/// same name more than once.
public struct MQTTUserProperty: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// The properties of an MQTT 5.0 packet (section 2.2.2): each known property, nil (or empty) when absent. Which ones
/// a packet may carry is checked by the decoder (a property where it does not belong is a protocol error, 0x82), and
/// so is each value's range.
///
/// Most packets carry none: the values live in a box, shared until changed (copy on write), so that a packet
/// without properties holds one nil reference, not the thirty fields (a PUBLISH is copied several times on its way
/// through the server). Each property is read and set by its name (``Values``, through dynamic member lookup).
@dynamicMemberLookup
public struct MQTTProperties: Sendable, Hashable {
    /// The properties' values.
    public struct Values: Sendable, Hashable {
        /// 0x01, byte 0 or 1 (PUBLISH, will properties).
        public var payloadFormatIndicator: UInt8?
        /// 0x02, seconds (PUBLISH, will properties).
        public var messageExpiryInterval: UInt32?
        /// 0x03 (PUBLISH, will properties).
        public var contentType: String?
        /// 0x08 (PUBLISH, will properties).
        public var responseTopic: String?
        /// 0x09 (PUBLISH, will properties).
        public var correlationData: [UInt8]?
        /// 0x0B, each 1 to 268,435,455: one in SUBSCRIBE, any number in PUBLISH (server to client).
        public var subscriptionIdentifiers: [Int] = []
        /// 0x11, seconds (CONNECT, CONNACK, DISCONNECT).
        public var sessionExpiryInterval: UInt32?
        /// 0x12 (CONNACK).
        public var assignedClientIdentifier: String?
        /// 0x13, seconds (CONNACK).
        public var serverKeepAlive: UInt16?
        /// 0x15 (CONNECT, CONNACK, AUTH).
        public var authenticationMethod: String?
        /// 0x16 (CONNECT, CONNACK, AUTH).
        public var authenticationData: [UInt8]?
        /// 0x17, 0 or 1 (CONNECT).
        public var requestProblemInformation: UInt8?
        /// 0x18, seconds (will properties).
        public var willDelayInterval: UInt32?
        /// 0x19, 0 or 1 (CONNECT).
        public var requestResponseInformation: UInt8?
        /// 0x1A (CONNACK).
        public var responseInformation: String?
        /// 0x1C (CONNACK, DISCONNECT).
        public var serverReference: String?
        /// 0x1F (CONNACK, PUBACK, PUBREC, PUBREL, PUBCOMP, SUBACK, UNSUBACK, DISCONNECT, AUTH).
        public var reasonString: String?
        /// 0x21, 1 to 65,535 (CONNECT, CONNACK).
        public var receiveMaximum: UInt16?
        /// 0x22 (CONNECT, CONNACK).
        public var topicAliasMaximum: UInt16?
        /// 0x23, 1 to 65,535 (PUBLISH).
        public var topicAlias: UInt16?
        /// 0x24, 0 or 1 (CONNACK).
        public var maximumQoS: UInt8?
        /// 0x25, 0 or 1 (CONNACK).
        public var retainAvailable: UInt8?
        /// 0x26, any number, in order (every packet that has properties).
        public var userProperties: [MQTTUserProperty] = []
        /// 0x27, 1 to 4,294,967,295 (CONNECT, CONNACK).
        public var maximumPacketSize: UInt32?
        /// 0x28, 0 or 1 (CONNACK).
        public var wildcardSubscriptionAvailable: UInt8?
        /// 0x29, 0 or 1 (CONNACK).
        public var subscriptionIdentifierAvailable: UInt8?
        /// 0x2A, 0 or 1 (CONNACK).
        public var sharedSubscriptionAvailable: UInt8?

        public init() {}
    }

    /// The values, shared by copies until one of them changes (the invariant of ``storage``: never changed while
    /// another ``MQTTProperties`` refers to it, which `isKnownUniquelyReferenced` checks before every change).
    private final class Storage: @unchecked Sendable {
        var values: Values
        init(_ values: Values) { self.values = values }
    }

    /// Nil when no property was ever set.
    private var storage: Storage?

    /// No properties.
    public init() {}

    /// Reads or sets one property by its name (`properties.topicAlias`).
    public subscript<Value>(dynamicMember path: WritableKeyPath<Values, Value>) -> Value {
        get { (storage?.values ?? Self.none)[keyPath: path] }
        set {
            if storage == nil {
                storage = Storage(Values())
            } else if !isKnownUniquelyReferenced(&storage) {
                storage = Storage(storage!.values)
            }
            storage!.values[keyPath: path] = newValue
        }
    }

    /// The values, all absent when none is set.
    public var values: Values { storage?.values ?? Self.none }

    private static let none = Values()

    /// True when no property is set.
    public var isEmpty: Bool { storage == nil || storage!.values == Self.none }

    public static func == (lhs: MQTTProperties, rhs: MQTTProperties) -> Bool {
        lhs.storage === rhs.storage || lhs.values == rhs.values
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(values) }
}

/// A will message (CONNECT): published by the server when the connection ends without a DISCONNECT that discards it.
public struct MQTTWill: Sendable, Hashable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: MQTTQoS
    public var retain: Bool
    /// The will properties (MQTT 5.0): will delay, payload format, message expiry, content type, response topic,
    /// correlation data, user properties.
    public var properties: MQTTProperties

    public init(
        topic: String, payload: [UInt8], qos: MQTTQoS = .atMostOnce, retain: Bool = false,
        properties: MQTTProperties = MQTTProperties()
    ) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.properties = properties
    }
}

/// CONNECT (client to server).
public struct MQTTConnect: Sendable, Hashable {
    public var version: MQTTVersion
    /// 3.1.1's clean session, 5.0's clean start.
    public var cleanStart: Bool
    /// Seconds; 0: no keepalive.
    public var keepAlive: UInt16
    /// May be empty.
    public var clientID: String
    public var will: MQTTWill?
    public var username: String?
    /// Binary data (3.1.1 calls it a password too).
    public var password: [UInt8]?
    /// MQTT 5.0's CONNECT properties.
    public var properties: MQTTProperties

    public init(
        version: MQTTVersion, cleanStart: Bool = true, keepAlive: UInt16 = 60, clientID: String,
        will: MQTTWill? = nil, username: String? = nil, password: [UInt8]? = nil,
        properties: MQTTProperties = MQTTProperties()
    ) {
        self.version = version
        self.cleanStart = cleanStart
        self.keepAlive = keepAlive
        self.clientID = clientID
        self.will = will
        self.username = username
        self.password = password
        self.properties = properties
    }
}

/// CONNACK (server to client). `reasonCode` is 5.0's reason code; for 3.1.1 it is the return code (0 to 5).
public struct MQTTConnAck: Sendable, Hashable {
    public var sessionPresent: Bool
    public var reasonCode: UInt8
    public var properties: MQTTProperties

    public init(sessionPresent: Bool = false, reasonCode: UInt8 = 0, properties: MQTTProperties = MQTTProperties()) {
        self.sessionPresent = sessionPresent
        self.reasonCode = reasonCode
        self.properties = properties
    }
}

/// PUBLISH (both ways). The payload is a slice: when decoded, of the decoder's buffer (valid until more bytes are
/// appended to the decoder: copy it to keep it).
public struct MQTTPublish: Sendable, Hashable {
    /// The topic name; empty only with a topic alias (5.0).
    public var topic: String
    public var qos: MQTTQoS
    public var retain: Bool
    public var dup: Bool
    /// Present (1 to 65,535) exactly when `qos` is above 0.
    public var packetID: UInt16?
    public var properties: MQTTProperties
    public var payload: ArraySlice<UInt8>

    public init(
        topic: String, qos: MQTTQoS = .atMostOnce, retain: Bool = false, dup: Bool = false, packetID: UInt16? = nil,
        properties: MQTTProperties = MQTTProperties(), payload: ArraySlice<UInt8>
    ) {
        self.topic = topic
        self.qos = qos
        self.retain = retain
        self.dup = dup
        self.packetID = packetID
        self.properties = properties
        self.payload = payload
    }
}

/// PUBACK, PUBREC, PUBREL and PUBCOMP: a packet identifier, and in 5.0 a reason code and properties (both left out
/// on the wire when the reason is 0 and there are no properties).
public struct MQTTAck: Sendable, Hashable {
    public var packetID: UInt16
    public var reasonCode: UInt8
    public var properties: MQTTProperties

    public init(packetID: UInt16, reasonCode: UInt8 = 0, properties: MQTTProperties = MQTTProperties()) {
        self.packetID = packetID
        self.reasonCode = reasonCode
        self.properties = properties
    }
}

/// The options of one topic filter in SUBSCRIBE (5.0 has all four; 3.1.1 only the QoS).
public struct MQTTSubscriptionOptions: Sendable, Hashable {
    public var qos: MQTTQoS
    /// 5.0: the server does not send the client its own publications through this subscription.
    public var noLocal: Bool
    /// 5.0: messages keep the RETAIN flag they were published with.
    public var retainAsPublished: Bool
    /// 5.0: 0 sends the retained messages at subscribe, 1 only if the subscription did not exist, 2 never.
    public var retainHandling: UInt8

    public init(
        qos: MQTTQoS = .atMostOnce, noLocal: Bool = false, retainAsPublished: Bool = false, retainHandling: UInt8 = 0
    ) {
        self.qos = qos
        self.noLocal = noLocal
        self.retainAsPublished = retainAsPublished
        self.retainHandling = retainHandling
    }
}

/// SUBSCRIBE (client to server): at least one filter.
public struct MQTTSubscribe: Sendable, Hashable {
    public var packetID: UInt16
    public var filters: [(filter: String, options: MQTTSubscriptionOptions)]
    public var properties: MQTTProperties

    public init(
        packetID: UInt16, filters: [(filter: String, options: MQTTSubscriptionOptions)],
        properties: MQTTProperties = MQTTProperties()
    ) {
        self.packetID = packetID
        self.filters = filters
        self.properties = properties
    }

    public static func == (lhs: MQTTSubscribe, rhs: MQTTSubscribe) -> Bool {
        lhs.packetID == rhs.packetID && lhs.properties == rhs.properties
            && lhs.filters.map(\.filter) == rhs.filters.map(\.filter)
            && lhs.filters.map(\.options) == rhs.filters.map(\.options)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(packetID)
        hasher.combine(filters.map(\.filter))
    }
}

/// SUBACK (server to client): one reason (return) code per filter, in order.
public struct MQTTSubAck: Sendable, Hashable {
    public var packetID: UInt16
    public var reasonCodes: [UInt8]
    public var properties: MQTTProperties

    public init(packetID: UInt16, reasonCodes: [UInt8], properties: MQTTProperties = MQTTProperties()) {
        self.packetID = packetID
        self.reasonCodes = reasonCodes
        self.properties = properties
    }
}

/// UNSUBSCRIBE (client to server): at least one filter.
public struct MQTTUnsubscribe: Sendable, Hashable {
    public var packetID: UInt16
    public var filters: [String]
    public var properties: MQTTProperties

    public init(packetID: UInt16, filters: [String], properties: MQTTProperties = MQTTProperties()) {
        self.packetID = packetID
        self.filters = filters
        self.properties = properties
    }
}

/// UNSUBACK (server to client): in 5.0 one reason code per filter; 3.1.1 has none (the list is empty).
public struct MQTTUnsubAck: Sendable, Hashable {
    public var packetID: UInt16
    public var reasonCodes: [UInt8]
    public var properties: MQTTProperties

    public init(packetID: UInt16, reasonCodes: [UInt8] = [], properties: MQTTProperties = MQTTProperties()) {
        self.packetID = packetID
        self.reasonCodes = reasonCodes
        self.properties = properties
    }
}

/// DISCONNECT (both ways in 5.0, client to server in 3.1.1, where it has no reason code).
public struct MQTTDisconnect: Sendable, Hashable {
    public var reasonCode: UInt8
    public var properties: MQTTProperties

    public init(reasonCode: UInt8 = 0, properties: MQTTProperties = MQTTProperties()) {
        self.reasonCode = reasonCode
        self.properties = properties
    }
}

/// AUTH (5.0 only, both ways).
public struct MQTTAuth: Sendable, Hashable {
    public var reasonCode: UInt8
    public var properties: MQTTProperties

    public init(reasonCode: UInt8 = 0, properties: MQTTProperties = MQTTProperties()) {
        self.reasonCode = reasonCode
        self.properties = properties
    }
}

/// One control packet.
public enum MQTTPacket: Sendable, Hashable {
    case connect(MQTTConnect)
    case connack(MQTTConnAck)
    case publish(MQTTPublish)
    case puback(MQTTAck)
    case pubrec(MQTTAck)
    case pubrel(MQTTAck)
    case pubcomp(MQTTAck)
    case subscribe(MQTTSubscribe)
    case suback(MQTTSubAck)
    case unsubscribe(MQTTUnsubscribe)
    case unsuback(MQTTUnsubAck)
    case pingreq
    case pingresp
    case disconnect(MQTTDisconnect)
    case auth(MQTTAuth)

    /// The packet's type.
    public var type: MQTTPacketType {
        switch self {
        case .connect: .connect
        case .connack: .connack
        case .publish: .publish
        case .puback: .puback
        case .pubrec: .pubrec
        case .pubrel: .pubrel
        case .pubcomp: .pubcomp
        case .subscribe: .subscribe
        case .suback: .suback
        case .unsubscribe: .unsubscribe
        case .unsuback: .unsuback
        case .pingreq: .pingreq
        case .pingresp: .pingresp
        case .disconnect: .disconnect
        case .auth: .auth
        }
    }
}
