import XCTest

@testable import SubscriptionMQTT

/// PUBLISH and its acknowledgements (PUBACK, PUBREC, PUBREL, PUBCOMP) as the specifications refuse them.
final class MalformedPublishTests: XCTestCase {
    func testTopicNamesWithWildcards() {
        for version in [MQTTVersion.v311, .v5] {
            let noProperties: [UInt8] = version == .v5 ? [0] : []
            for topic in ["a/+", "+", "#", "a/#", "a+b", "sport/tennis#"] {
                assertFailsAfterConnect(
                    version, packet(0x30, string(topic) + noProperties), topicNameInvalid, message: "wildcard")
            }
        }
    }

    func testEmptyTopicNames() {
        assertFailsAfterConnect(.v311, packet(0x30, string("") + [0x70]), malformed, message: "empty topic")
        assertFailsAfterConnect(.v5, packet(0x30, string("") + [0x00, 0x70]), protocolError, message: "no topic alias")
        // With a topic alias, 5.0 allows it.
        var properties = MQTTProperties()
        properties.topicAlias = 3
        assertDecodesAfterConnect(
            .v5, packet(0x30, string("") + [0x03, 0x23, 0x00, 0x03, 0x70]),
            [.publish(MQTTPublish(topic: "", properties: properties, payload: [0x70]))])
    }

    func testPacketIdentifiers() {
        for version in [MQTTVersion.v311, .v5] {
            let noProperties: [UInt8] = version == .v5 ? [0] : []
            // 0 at QoS 1 and 2.
            for first: UInt8 in [0x32, 0x34, 0x3A, 0x3C] {
                assertFailsAfterConnect(
                    version, packet(first, string("t") + [0, 0] + noProperties), protocolError,
                    message: "packet identifier 0")
            }
            // Cut off.
            assertFailsAfterConnect(version, packet(0x32, string("t") + [0]), malformed, message: "packet identifier")
            // At QoS 0 there is none: the two bytes are payload.
            let payload: [UInt8] = [0, 0]
            assertDecodesAfterConnect(
                version, packet(0x30, string("t") + noProperties + payload),
                [.publish(MQTTPublish(topic: "t", payload: payload[...]))])
        }
        // The topic name cut off.
        assertFailsAfterConnect(.v311, packet(0x30, [0x00, 0x05, 0x61]), malformed, message: "topic name")
    }

    func testAcknowledgements() {
        for first: UInt8 in [0x40, 0x50, 0x62, 0x70] {
            for version in [MQTTVersion.v311, .v5] {
                assertFailsAfterConnect(version, [first, 0x02, 0x00, 0x00], protocolError, message: "identifier 0")
            }
            // 5.0: a reason code and properties, then bytes left over.
            assertFailsAfterConnect(.v5, [first, 0x05, 0x00, 0x01, 0x10, 0x00, 0xFF], malformed, message: "left over")
            // 5.0: the three forms.
            let type = MQTTPacketType(rawValue: first >> 4)!
            func ack(_ value: MQTTAck) -> MQTTPacket {
                switch type {
                case .puback: return .puback(value)
                case .pubrec: return .pubrec(value)
                case .pubrel: return .pubrel(value)
                default: return .pubcomp(value)
                }
            }
            assertDecodesAfterConnect(
                .v5,
                [first, 0x02, 0x00, 0x01] + [first, 0x03, 0x00, 0x02, 0x91] + [first, 0x04, 0x00, 0x03, 0x80, 0x00],
                [
                    ack(MQTTAck(packetID: 1)), ack(MQTTAck(packetID: 2, reasonCode: 0x91)),
                    ack(MQTTAck(packetID: 3, reasonCode: 0x80)),
                ])
        }
    }
}
