/// The MQTT 5.0 property identifiers (section 2.2.2.2), and the packets each may stand in.
enum MQTTPropertyID {
    static let payloadFormatIndicator: UInt8 = 0x01
    static let messageExpiryInterval: UInt8 = 0x02
    static let contentType: UInt8 = 0x03
    static let responseTopic: UInt8 = 0x08
    static let correlationData: UInt8 = 0x09
    static let subscriptionIdentifier: UInt8 = 0x0B
    static let sessionExpiryInterval: UInt8 = 0x11
    static let assignedClientIdentifier: UInt8 = 0x12
    static let serverKeepAlive: UInt8 = 0x13
    static let authenticationMethod: UInt8 = 0x15
    static let authenticationData: UInt8 = 0x16
    static let requestProblemInformation: UInt8 = 0x17
    static let willDelayInterval: UInt8 = 0x18
    static let requestResponseInformation: UInt8 = 0x19
    static let responseInformation: UInt8 = 0x1A
    static let serverReference: UInt8 = 0x1C
    static let reasonString: UInt8 = 0x1F
    static let receiveMaximum: UInt8 = 0x21
    static let topicAliasMaximum: UInt8 = 0x22
    static let topicAlias: UInt8 = 0x23
    static let maximumQoS: UInt8 = 0x24
    static let retainAvailable: UInt8 = 0x25
    static let userProperty: UInt8 = 0x26
    static let maximumPacketSize: UInt8 = 0x27
    static let wildcardSubscriptionAvailable: UInt8 = 0x28
    static let subscriptionIdentifierAvailable: UInt8 = 0x29
    static let sharedSubscriptionAvailable: UInt8 = 0x2A

    /// The property's name in the specification, for messages; nil for an unknown identifier.
    static func name(_ id: UInt8) -> String? {
        switch id {
        case payloadFormatIndicator: return "payload format indicator"
        case messageExpiryInterval: return "message expiry interval"
        case contentType: return "content type"
        case responseTopic: return "response topic"
        case correlationData: return "correlation data"
        case subscriptionIdentifier: return "subscription identifier"
        case sessionExpiryInterval: return "session expiry interval"
        case assignedClientIdentifier: return "assigned client identifier"
        case serverKeepAlive: return "server keep alive"
        case authenticationMethod: return "authentication method"
        case authenticationData: return "authentication data"
        case requestProblemInformation: return "request problem information"
        case willDelayInterval: return "will delay interval"
        case requestResponseInformation: return "request response information"
        case responseInformation: return "response information"
        case serverReference: return "server reference"
        case reasonString: return "reason string"
        case receiveMaximum: return "receive maximum"
        case topicAliasMaximum: return "topic alias maximum"
        case topicAlias: return "topic alias"
        case maximumQoS: return "maximum QoS"
        case retainAvailable: return "retain available"
        case userProperty: return "user property"
        case maximumPacketSize: return "maximum packet size"
        case wildcardSubscriptionAvailable: return "wildcard subscription available"
        case subscriptionIdentifierAvailable: return "subscription identifier available"
        case sharedSubscriptionAvailable: return "shared subscription available"
        default: return nil
        }
    }

    /// The places a property may stand in (section 2.2.2.2's table), nil for an unknown identifier.
    static func places(_ id: UInt8) -> MQTTPropertyPlace.Set? {
        switch id {
        case payloadFormatIndicator, messageExpiryInterval, contentType, responseTopic, correlationData:
            return [.publish, .will]
        case subscriptionIdentifier: return [.publish, .subscribe]
        case sessionExpiryInterval: return [.connect, .connack, .disconnect]
        case assignedClientIdentifier, serverKeepAlive, responseInformation, maximumQoS, retainAvailable,
            wildcardSubscriptionAvailable, subscriptionIdentifierAvailable, sharedSubscriptionAvailable:
            return [.connack]
        case authenticationMethod, authenticationData: return [.connect, .connack, .auth]
        case requestProblemInformation, requestResponseInformation: return [.connect]
        case willDelayInterval: return [.will]
        case serverReference: return [.connack, .disconnect]
        case reasonString: return [.connack, .ack, .suback, .unsuback, .disconnect, .auth]
        case receiveMaximum, topicAliasMaximum, maximumPacketSize: return [.connect, .connack]
        case topicAlias: return [.publish]
        case userProperty: return .all
        default: return nil
        }
    }
}

/// Where a property list stands: a packet's variable header, or CONNECT's will.
enum MQTTPropertyPlace: UInt8 {
    case connect
    /// The will properties, in CONNECT's payload.
    case will
    case connack
    case publish
    /// PUBACK, PUBREC, PUBREL and PUBCOMP.
    case ack
    case subscribe
    case suback
    case unsubscribe
    case unsuback
    case disconnect
    case auth

    /// A set of places.
    struct Set: OptionSet {
        var rawValue: UInt16

        static let connect = Set(.connect)
        static let will = Set(.will)
        static let connack = Set(.connack)
        static let publish = Set(.publish)
        static let ack = Set(.ack)
        static let subscribe = Set(.subscribe)
        static let suback = Set(.suback)
        static let unsubscribe = Set(.unsubscribe)
        static let unsuback = Set(.unsuback)
        static let disconnect = Set(.disconnect)
        static let auth = Set(.auth)
        static let all = Set(rawValue: (1 << 11) - 1)

        init(rawValue: UInt16) { self.rawValue = rawValue }

        init(_ place: MQTTPropertyPlace) { rawValue = 1 << place.rawValue }
    }
}
