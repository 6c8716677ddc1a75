import XCTest

@testable import SubscriptionMQTT

/// MQTT 5.0 property lists the specification refuses: unknown identifiers, properties where they do not belong or
/// twice, values out of range, lengths past the packet or the list.
final class MalformedPropertyTests: XCTestCase {
    /// A client's 5.0 PUBLISH at QoS 0 to `t` carrying the property list `list`, then `payload`.
    private func publish(_ list: [UInt8], payload: [UInt8] = [0x70]) -> [UInt8] {
        packet(0x30, string("t") + properties(list) + payload)
    }

    /// A 5.0 CONNECT carrying the property list `list`.
    private func connect(_ list: [UInt8]) -> [UInt8] {
        packet(0x10, string("MQTT") + [5, 0x02, 0, 60] + properties(list) + string("id"))
    }

    /// A server's 5.0 CONNACK carrying the property list `list`.
    private func connAck(_ list: [UInt8]) -> [UInt8] {
        packet(0x20, [0, 0] + properties(list))
    }

    func testUnknownIdentifiers() {
        for id: UInt8 in [0x00, 0x04, 0x0A, 0x10, 0x14, 0x1B, 0x20, 0x2B, 0x7F, 0x80, 0xFF] {
            assertFailsAfterConnect(.v5, publish([id, 0]), malformed, message: "unknown property")
        }
    }

    func testPropertiesWhereTheyDoNotBelong() {
        // (property bytes, a packet that may not carry it)
        let topicAlias: [UInt8] = [0x23, 0, 1]
        let reasonString: [UInt8] = [0x1F] + string("r")
        let sessionExpiry: [UInt8] = [0x11, 0, 0, 0, 1]
        let subscriptionID: [UInt8] = [0x0B, 1]
        let serverKeepAlive: [UInt8] = [0x13, 0, 1]
        let authenticationMethod: [UInt8] = [0x15] + string("m")
        assertFails(connect(topicAlias), protocolError, message: "not allowed in CONNECT")
        assertFails(connect(serverKeepAlive), protocolError, message: "server keep alive")
        assertFails(connect(reasonString), protocolError)
        assertFailsAfterConnect(.v5, publish(reasonString), protocolError, message: "not allowed in PUBLISH")
        assertFailsAfterConnect(.v5, publish(sessionExpiry), protocolError)
        assertFailsAfterConnect(
            .v5, packet(0x40, [0, 1, 0] + properties(topicAlias)), protocolError, message: "PUBACK")
        assertFailsAfterConnect(.v5, packet(0x62, [0, 1, 0] + properties(authenticationMethod)), protocolError)
        assertFailsAfterConnect(
            .v5, packet(0x82, [0, 1] + properties(sessionExpiry) + string("a") + [0]), protocolError,
            message: "SUBSCRIBE")
        assertFailsAfterConnect(
            .v5, packet(0xA2, [0, 1] + properties(subscriptionID) + string("a")), protocolError, message: "UNSUBSCRIBE")
        assertFailsAfterConnect(.v5, packet(0xE0, [0] + properties(topicAlias)), protocolError, message: "DISCONNECT")
        assertFailsAfterConnect(.v5, packet(0xF0, [0x18] + properties(sessionExpiry)), protocolError, message: "AUTH")
        assertFails(connAck([0x17, 1]), protocolError, setup: .client(.v5), message: "CONNACK")
        assertFails(packet(0x90, [0, 1] + properties(topicAlias) + [0]), protocolError, setup: .client(.v5))
        assertFails(packet(0xB0, [0, 1] + properties(sessionExpiry) + [0]), protocolError, setup: .client(.v5))
    }

    func testPropertiesThatMayAppearOnceAppearingTwice() {
        assertFailsAfterConnect(.v5, publish([0x23, 0, 1, 0x23, 0, 2]), protocolError, message: "twice")
        assertFailsAfterConnect(.v5, publish([0x03] + string("a") + [0x03] + string("a")), protocolError)
        assertFails(connect([0x21, 0, 1, 0x21, 0, 1]), protocolError, message: "receive maximum property twice")
        assertFailsAfterConnect(
            .v5, packet(0x82, [0, 1] + properties([0x0B, 1, 0x0B, 2]) + string("a") + [0]), protocolError,
            message: "subscription identifier property twice")
        assertFails(connAck([0x24, 0, 0x24, 0]), protocolError, setup: .client(.v5))
        // User properties repeat anywhere; subscription identifiers in a server's PUBLISH.
        let user = [0x26] + string("k") + string("v")
        var expected = MQTTProperties()
        expected.userProperties = [MQTTUserProperty("k", "v"), MQTTUserProperty("k", "v")]
        assertDecodesAfterConnect(
            .v5, publish(user + user), [.publish(MQTTPublish(topic: "t", properties: expected, payload: [0x70]))])
        expected.subscriptionIdentifiers = [1, 2]
        assertDecodes(
            publish(user + [0x0B, 1] + user + [0x0B, 2]),
            [.publish(MQTTPublish(topic: "t", properties: expected, payload: [0x70]))], setup: .client(.v5))
    }

    func testValuesOutOfRange() {
        assertFails(connect([0x21, 0, 0]), protocolError, message: "receive maximum of 0")
        assertFails(connect([0x27, 0, 0, 0, 0]), protocolError, message: "maximum packet size of 0")
        assertFails(connect([0x17, 2]), protocolError, message: "request problem information of 2")
        assertFails(connect([0x19, 0xFF]), protocolError, message: "request response information")
        assertFailsAfterConnect(.v5, publish([0x23, 0, 0]), protocolError, message: "topic alias of 0")
        assertFailsAfterConnect(.v5, publish([0x01, 2]), protocolError, message: "payload format indicator of 2")
        assertFailsAfterConnect(
            .v5, packet(0x82, [0, 1] + properties([0x0B, 0]) + string("a") + [0]), protocolError,
            message: "subscription identifier of 0")
        // A client never sends a subscription identifier in PUBLISH.
        assertFailsAfterConnect(.v5, publish([0x0B, 1]), protocolError, message: "client's PUBLISH")
        assertFails(publish([0x0B, 0]), protocolError, setup: .client(.v5))
        for id: UInt8 in [0x24, 0x25, 0x28, 0x29, 0x2A] {
            assertFails(connAck([id, 2]), protocolError, setup: .client(.v5), message: "must be 0 or 1")
        }
        // A response topic is a topic name.
        assertFailsAfterConnect(.v5, publish([0x08] + string("a/#")), protocolError, message: "response topic")
    }

    func testLengthsPastThePacketOrTheList() {
        // The property length runs past the packet.
        assertFailsAfterConnect(.v5, packet(0x30, string("t") + [0x05, 0x23, 0, 1]), malformed, message: "runs past")
        assertFailsAfterConnect(.v5, packet(0x40, [0, 1, 0, 0x01]), malformed, message: "runs past")
        // A value runs past the list (though not past the packet).
        assertFailsAfterConnect(
            .v5, packet(0x30, string("t") + [0x02, 0x23, 0] + [0x70, 0x70]), malformed, message: "property list ends")
        assertFailsAfterConnect(
            .v5, packet(0x30, string("t") + [0x03, 0x26, 0, 5] + Array("hello".utf8)), malformed,
            message: "property list ends inside a user property's name")
        // A subscription identifier in more than 4 bytes; a property length in more than 4 bytes.
        assertFails(publish([0x0B, 0x80, 0x80, 0x80, 0x80, 0x01]), malformed, setup: .client(.v5), message: "4 bytes")
        assertFailsAfterConnect(.v5, packet(0x30, string("t") + [0x80, 0x80, 0x80, 0x80, 0x01]), malformed)
        // The largest subscription identifier.
        var largest = MQTTProperties()
        largest.subscriptionIdentifiers = [268_435_455]
        assertDecodes(
            publish([0x0B, 0xFF, 0xFF, 0xFF, 0x7F], payload: []),
            [.publish(MQTTPublish(topic: "t", properties: largest, payload: []))], setup: .client(.v5))
    }
}
