@testable import SubscriptionMQTT

/// Packets for the round trips: every packet type, every property at least once (user properties repeated, the
/// same name twice), binary data holding every byte value, strings beyond ASCII.
enum Fixtures {
    /// Every byte value, 0 to 255.
    static let allBytes: [UInt8] = Array(0...255)

    /// Three user properties, a name repeated, in an order that is not sorted.
    static let userProperties = [
        MQTTUserProperty("z", "1"), MQTTUserProperty("a", "é€𝄞"), MQTTUserProperty("z", ""),
    ]

    /// The properties of a 5.0 CONNECT, all of them.
    static var connectProperties: MQTTProperties {
        var properties = MQTTProperties()
        properties.sessionExpiryInterval = 0xFFFF_FFFF
        properties.authenticationMethod = "SCRAM-SHA-256"
        properties.authenticationData = allBytes
        properties.requestProblemInformation = 0
        properties.requestResponseInformation = 1
        properties.receiveMaximum = 20
        properties.topicAliasMaximum = 0
        properties.maximumPacketSize = 1 << 20
        properties.userProperties = userProperties
        return properties
    }

    /// The will properties, all of them.
    static var willProperties: MQTTProperties {
        var properties = MQTTProperties()
        properties.willDelayInterval = 30
        properties.payloadFormatIndicator = 1
        properties.messageExpiryInterval = 3600
        properties.contentType = "text/plain"
        properties.responseTopic = "replies/here"
        properties.correlationData = allBytes
        properties.userProperties = userProperties
        return properties
    }

    /// The properties of a 5.0 CONNACK, all of them.
    static var connAckProperties: MQTTProperties {
        var properties = MQTTProperties()
        properties.sessionExpiryInterval = 120
        properties.assignedClientIdentifier = "auto-1"
        properties.serverKeepAlive = 30
        properties.authenticationMethod = "SCRAM-SHA-256"
        properties.authenticationData = [0, 1, 2]
        properties.responseInformation = "resp/"
        properties.serverReference = "other.example:1883"
        properties.reasonString = "welcome"
        properties.receiveMaximum = 65535
        properties.topicAliasMaximum = 10
        properties.maximumQoS = 1
        properties.retainAvailable = 1
        properties.maximumPacketSize = 0xFFFF_FFFF
        properties.wildcardSubscriptionAvailable = 1
        properties.subscriptionIdentifierAvailable = 0
        properties.sharedSubscriptionAvailable = 1
        properties.userProperties = userProperties
        return properties
    }

    /// The properties of a 5.0 PUBLISH a client sends, all of them (no subscription identifier).
    static var publishProperties: MQTTProperties {
        var properties = MQTTProperties()
        properties.payloadFormatIndicator = 0
        properties.messageExpiryInterval = 0
        properties.contentType = "application/octet-stream"
        properties.responseTopic = "r/é"
        properties.correlationData = allBytes
        properties.topicAlias = 7
        properties.userProperties = userProperties
        return properties
    }

    /// The properties of a reason string and user properties (acknowledgements, SUBACK, UNSUBACK).
    static var reasonProperties: MQTTProperties {
        var properties = MQTTProperties()
        properties.reasonString = "because"
        properties.userProperties = userProperties
        return properties
    }

    /// User properties alone.
    static var onlyUserProperties: MQTTProperties {
        var properties = MQTTProperties()
        properties.userProperties = userProperties
        return properties
    }

    /// A payload of `count` bytes, not all the same.
    static func payload(_ count: Int) -> ArraySlice<UInt8> {
        ArraySlice((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
    }

    /// The packets a client sends after its CONNECT, for `version`.
    static func clientPackets(_ version: MQTTVersion) -> [MQTTPacket] {
        let v5 = version == .v5
        let reasons = v5 ? reasonProperties : MQTTProperties()
        var subscribeProperties = MQTTProperties()
        if v5 {
            subscribeProperties.subscriptionIdentifiers = [268_435_455]
            subscribeProperties.userProperties = userProperties
        }
        return [
            .publish(MQTTPublish(topic: "a/b", payload: [])),
            .publish(
                MQTTPublish(
                    topic: "sensors/é/€/𝄞", qos: .atLeastOnce, retain: true, packetID: 1,
                    properties: v5 ? publishProperties : MQTTProperties(), payload: payload(300))),
            .publish(
                MQTTPublish(
                    topic: "/", qos: .exactlyOnce, retain: false, dup: true, packetID: 65535, payload: payload(5))),
            .puback(MQTTAck(packetID: 1)),
            .puback(MQTTAck(packetID: 2, reasonCode: v5 ? 0x10 : 0)),
            .pubrec(MQTTAck(packetID: 3, reasonCode: v5 ? 0x80 : 0, properties: reasons)),
            .pubrel(MQTTAck(packetID: 4, reasonCode: v5 ? 0x92 : 0)),
            .pubrel(MQTTAck(packetID: 5, properties: reasons)),
            .pubcomp(MQTTAck(packetID: 6, properties: reasons)),
            .subscribe(
                MQTTSubscribe(
                    packetID: 7,
                    filters: [
                        ("a/+/c", MQTTSubscriptionOptions(qos: .atMostOnce)),
                        ("#", MQTTSubscriptionOptions(qos: .atLeastOnce)),
                        (
                            "$share/group/x/#",
                            MQTTSubscriptionOptions(
                                qos: .exactlyOnce, retainAsPublished: v5, retainHandling: v5 ? 2 : 0)
                        ),
                        (
                            "+", MQTTSubscriptionOptions(qos: .atLeastOnce, noLocal: v5, retainHandling: v5 ? 1 : 0)
                        ),
                    ], properties: subscribeProperties)),
            .unsubscribe(
                MQTTUnsubscribe(
                    packetID: 8, filters: ["a/+/c", "#", "$share/g/+"],
                    properties: v5 ? onlyUserProperties : MQTTProperties())),
            .pingreq,
        ]
    }

    /// The packets a server sends, for `version`.
    static func serverPackets(_ version: MQTTVersion) -> [MQTTPacket] {
        let v5 = version == .v5
        let reasons = v5 ? reasonProperties : MQTTProperties()
        var deliveryProperties = v5 ? publishProperties : MQTTProperties()
        if v5 { deliveryProperties.subscriptionIdentifiers = [1, 128, 16384, 268_435_455] }
        return [
            .connack(MQTTConnAck(sessionPresent: true, reasonCode: 0)),
            .connack(
                MQTTConnAck(reasonCode: v5 ? 0x87 : 5, properties: v5 ? connAckProperties : MQTTProperties())),
            .publish(
                MQTTPublish(
                    topic: "t", qos: .atLeastOnce, packetID: 9, properties: deliveryProperties, payload: payload(40))),
            .puback(MQTTAck(packetID: 9, properties: reasons)),
            .pubrec(MQTTAck(packetID: 10)),
            .pubrel(MQTTAck(packetID: 10)),
            .pubcomp(MQTTAck(packetID: 10, reasonCode: v5 ? 0x92 : 0)),
            .suback(MQTTSubAck(packetID: 7, reasonCodes: [0, 1, 2, 0x80], properties: reasons)),
            .unsuback(
                MQTTUnsubAck(packetID: 8, reasonCodes: v5 ? [0, 0x11] : [], properties: reasons)),
            .pingresp,
        ]
    }
}
