import XCTest

@testable import SubscriptionMQTT

/// CONNECT packets the specifications refuse, and the protocol levels this server does not speak, one rule at a
/// time; and the strings every packet carries (well-formed UTF-8, no U+0000).
final class MalformedConnectTests: XCTestCase {
    /// A CONNECT made by hand: protocol `name` and `level`, connect `flags`, keep alive 60, in 5.0 (level 5) an
    /// empty property list unless `properties` is given, then `payload`.
    private func connect(
        name: String = "MQTT", level: UInt8, flags: UInt8 = 0x02, properties: [UInt8]? = nil, payload: [UInt8]
    ) -> [UInt8] {
        let propertyBytes = properties ?? (level == 5 ? [0x00] : [])
        return packet(0x10, string(name) + [level, flags, 0x00, 0x3C] + propertyBytes + payload)
    }

    func testAValidHandMadeConnect() {
        assertDecodes(
            connect(level: 4, payload: string("id")),
            [.connect(MQTTConnect(version: .v311, keepAlive: 60, clientID: "id"))])
        assertDecodes(
            connect(level: 5, payload: string("id")),
            [.connect(MQTTConnect(version: .v5, keepAlive: 60, clientID: "id"))])
    }

    func testUnsupportedProtocolLevels() {
        for level: UInt8 in [0, 1, 2, 3, 6, 7, 255] {
            assertFails(
                connect(level: level, payload: string("id")), unsupportedVersion, message: "level \(level)",
                unsupportedLevel: level)
        }
        // MQTT 3.1, whatever follows the level.
        assertFails(
            connect(name: "MQIsdp", level: 3, payload: string("id")), unsupportedVersion, unsupportedLevel: 3)
        assertFails(
            connect(name: "MQIsdp", level: 3, flags: 0xFF, payload: []), unsupportedVersion, unsupportedLevel: 3)
        // Another protocol: nothing to answer.
        let other = assertFails(connect(name: "MQTX", level: 4, payload: string("id")), unsupportedVersion)
        XCTAssertNil(other?.unsupportedLevel)
        assertFails(connect(name: "", level: 4, payload: string("id")), unsupportedVersion)
    }

    func testConnectFlags() {
        // Reserved bit 0.
        assertFails(connect(level: 4, flags: 0x03, payload: string("id")), malformed, message: "reserved")
        assertFails(connect(level: 5, flags: 0x01, payload: string("id")), malformed, message: "reserved")
        for level: UInt8 in [4, 5] {
            // Will QoS or will retain without the will flag.
            for flags: UInt8 in [0x08, 0x10, 0x18, 0x20, 0x28] {
                assertFails(connect(level: level, flags: flags, payload: string("id")), malformed, message: "will")
            }
            // Will QoS 3.
            let will = string("id") + (level == 5 ? [0x00] : []) + string("w") + string("p")
            assertFails(connect(level: level, flags: 0x1C, payload: will), malformed, message: "will QoS 3")
        }
        // A password without a user name: malformed in 3.1.1, fine in 5.0.
        let password = string("id") + lengthPrefixed([1, 2])
        assertFails(connect(level: 4, flags: 0x42, payload: password), malformed, message: "password")
        assertDecodes(
            connect(level: 5, flags: 0x42, payload: password),
            [.connect(MQTTConnect(version: .v5, keepAlive: 60, clientID: "id", password: [1, 2]))])
    }

    func testPayloadFieldsMissingOrLeftOver() {
        for level: UInt8 in [4, 5] {
            assertFails(connect(level: level, payload: []), malformed, message: "client identifier")
            assertFails(connect(level: level, payload: [0x00]), malformed, message: "client identifier")
            assertFails(connect(level: level, payload: [0x00, 0x03, 0x61]), malformed, message: "client identifier")
            assertFails(connect(level: level, payload: string("id") + [0x00]), malformed, message: "left over")
            // The flags announce a user name, a password, a will that are not there.
            assertFails(connect(level: level, flags: 0x82, payload: string("id")), malformed, message: "user name")
            assertFails(
                connect(level: level, flags: 0xC2, payload: string("id") + string("u")), malformed,
                message: "password")
            assertFails(connect(level: level, flags: 0x06, payload: string("id")), malformed, message: "will")
        }
        // The variable header cut short.
        assertFails(packet(0x10, string("MQTT")), malformed, message: "protocol level")
        assertFails(packet(0x10, string("MQTT") + [4]), malformed, message: "connect flags")
        assertFails(packet(0x10, string("MQTT") + [4, 2, 0]), malformed, message: "keep alive")
        assertFails(packet(0x10, [0x00, 0x04, 0x4D]), malformed, message: "protocol name")
        assertFails(packet(0x10, string("MQTT") + [5, 2, 0, 60]), malformed, message: "property length")
        assertFails(connect(level: 5, properties: [0x03, 0x11], payload: []), malformed, message: "property length")
    }

    func testTheWillTopicIsATopicName() {
        for level: UInt8 in [4, 5] {
            let will = level == 5 ? [UInt8(0x00)] : []
            for topic in ["a/+", "#", "a/#", "+"] {
                assertFails(
                    connect(level: level, flags: 0x06, payload: string("id") + will + string(topic) + string("p")),
                    topicNameInvalid, message: "will topic")
            }
            assertFails(
                connect(level: level, flags: 0x06, payload: string("id") + will + string("") + string("p")),
                topicNameInvalid, message: "empty")
        }
    }

    func testWillPropertiesHoldOnlyWillProperties() {
        // A session expiry interval is a CONNECT property, not a will property.
        let sessionExpiry: [UInt8] = [0x11, 0, 0, 0, 1]
        assertFails(
            connect(
                level: 5, flags: 0x06, payload: string("id") + properties(sessionExpiry) + string("w") + string("p")),
            protocolError, message: "will properties")
        // And a will delay interval is a will property, not a CONNECT property.
        assertFails(
            connect(level: 5, properties: properties([0x18, 0, 0, 0, 1]), payload: string("id")), protocolError)
        // A will property list past the packet.
        assertFails(connect(level: 5, flags: 0x06, payload: string("id") + [0x09, 0x01]), malformed)
    }

    func testConnAck() {
        // Reserved acknowledge flags; bytes left over after the 5.0 properties; properties cut short.
        for flags: UInt8 in [0x02, 0x80, 0xFE] {
            assertFails([0x20, 0x02, flags, 0x00], malformed, setup: .client(.v311), message: "reserved")
            assertFails([0x20, 0x03, flags, 0x00, 0x00], malformed, setup: .client(.v5), message: "reserved")
        }
        assertFails([0x20, 0x04, 0x00, 0x00, 0x00, 0x00], malformed, setup: .client(.v5), message: "left over")
        assertFails([0x20, 0x04, 0x00, 0x00, 0x02, 0x24], malformed, setup: .client(.v5), message: "runs past")
        // Any reason code is read as it is: the client decides what it means.
        assertDecodes(
            [0x20, 0x03, 0x00, 0x9F, 0x00], [.connack(MQTTConnAck(reasonCode: 0x9F))], setup: .client(.v5))
    }

    func testStringsAreWellFormedUTF8WithoutNUL() {
        let bad: [[UInt8]] = [
            [0xFF], [0x80], [0xC0, 0x80], [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0xF8, 0x88, 0x80, 0x80, 0x80], [0x00], [0x61, 0x00, 0x62],
        ]
        for bytes in bad {
            // A client identifier, a user name, a will topic, a user property, a topic name, a topic filter.
            assertFails(connect(level: 4, payload: lengthPrefixed(bytes)), malformed, message: "UTF-8")
            assertFails(
                connect(level: 4, flags: 0x82, payload: string("id") + lengthPrefixed(bytes)), malformed,
                message: "user name")
            assertFails(
                connect(level: 4, flags: 0x06, payload: string("id") + lengthPrefixed(bytes) + string("p")), malformed,
                message: "will topic")
            assertFails(
                connect(level: 5, properties: properties([0x26] + string("k") + lengthPrefixed(bytes)), payload: []),
                malformed, message: "user property")
            assertFailsAfterConnect(.v311, packet(0x30, lengthPrefixed(bytes)), malformed, message: "topic name")
            assertFailsAfterConnect(
                .v5, packet(0x82, [0, 1, 0] + lengthPrefixed(bytes) + [0]), malformed, message: "topic filter")
        }
        // Binary data is not checked: a password of every byte value.
        assertDecodes(
            connect(level: 4, flags: 0xC2, payload: string("id") + string("u") + lengthPrefixed(Fixtures.allBytes)),
            [
                .connect(
                    MQTTConnect(
                        version: .v311, keepAlive: 60, clientID: "id", username: "u", password: Fixtures.allBytes))
            ])
    }
}
