import XCTest

@testable import SubscriptionMQTT

/// SUBSCRIBE, UNSUBSCRIBE, SUBACK and UNSUBACK as the specifications refuse them: packet identifiers, missing
/// filters, invalid filters and shared subscriptions, subscription options.
final class MalformedSubscribeTests: XCTestCase {
    /// A SUBSCRIBE with packet identifier 1 and `entries` (filter bytes and options), for `version`.
    private func subscribe(_ version: MQTTVersion, _ entries: [UInt8], packetID: [UInt8] = [0, 1]) -> [UInt8] {
        packet(0x82, packetID + (version == .v5 ? [0] : []) + entries)
    }

    /// An UNSUBSCRIBE with packet identifier 1 and `entries`, for `version`.
    private func unsubscribe(_ version: MQTTVersion, _ entries: [UInt8], packetID: [UInt8] = [0, 1]) -> [UInt8] {
        packet(0xA2, packetID + (version == .v5 ? [0] : []) + entries)
    }

    /// Filters MQTT refuses (section 4.7.1, shared subscriptions 4.8.2).
    static let invalidFilters = [
        "", "a#", "#a", "a/#/b", "#/", "#/#", "a+", "+a", "a/b+", "++", "a/+b/c", "$share//a", "$share/g",
        "$share/g/", "$share/g+/a", "$share/#/a", "$share/+/a", "$share/g/a#", "$share/g/a/#/b",
    ]

    /// Filters MQTT allows.
    static let validFilters = [
        "a", "#", "+", "+/+", "/", "//", "a//b", "a/+/#", "/#", "+/#", "$SYS/#", "$share", "$sharex/a", "$share/g/#",
        "$share/g/a/+", "$share/g//", "sport/tennis/+", "é/€/𝄞", "a b/c.d", "*", ">",
    ]

    func testPacketIdentifierZero() {
        for version in [MQTTVersion.v311, .v5] {
            assertFailsAfterConnect(
                version, subscribe(version, string("a") + [0], packetID: [0, 0]), protocolError, message: "identifier 0"
            )
            assertFailsAfterConnect(
                version, unsubscribe(version, string("a"), packetID: [0, 0]), protocolError, message: "identifier 0")
            assertFails(
                packet(0x90, [0, 0] + (version == .v5 ? [0] : []) + [0]), protocolError, setup: .client(version))
            assertFails(
                packet(0xB0, [0, 0] + (version == .v5 ? [0, 0] : [])), protocolError, setup: .client(version))
        }
    }

    func testNoFilter() {
        assertFailsAfterConnect(.v5, subscribe(.v5, []), protocolError, message: "no topic filter")
        assertFailsAfterConnect(.v311, subscribe(.v311, []), malformed, message: "no topic filter")
        assertFailsAfterConnect(.v5, unsubscribe(.v5, []), protocolError, message: "no topic filter")
        assertFailsAfterConnect(.v311, unsubscribe(.v311, []), malformed, message: "no topic filter")
        // A filter without its options byte.
        assertFailsAfterConnect(.v311, subscribe(.v311, string("a")), malformed, message: "subscription options")
        // Acknowledgements without reason codes.
        assertFails(packet(0x90, [0, 1]), malformed, setup: .client(.v311), message: "no reason code")
        assertFails(packet(0x90, [0, 1, 0]), malformed, setup: .client(.v5), message: "no reason code")
        assertFails(packet(0xB0, [0, 1, 0]), malformed, setup: .client(.v5), message: "no reason code")
    }

    func testInvalidFilters() {
        for version in [MQTTVersion.v311, .v5] {
            for filter in Self.invalidFilters {
                assertFailsAfterConnect(version, subscribe(version, string(filter) + [0]), topicFilterInvalid)
                assertFailsAfterConnect(version, unsubscribe(version, string(filter)), topicFilterInvalid)
            }
            // A valid filter first does not save the packet.
            assertFailsAfterConnect(
                version, subscribe(version, string("a") + [0] + string("a#") + [0]), topicFilterInvalid,
                message: "\"a#\"")
        }
    }

    func testValidFilters() {
        for version in [MQTTVersion.v311, .v5] {
            let entries: [UInt8] = Self.validFilters.flatMap { string($0) + [UInt8(1)] }
            let expected = MQTTSubscribe(
                packetID: 1, filters: Self.validFilters.map { ($0, MQTTSubscriptionOptions(qos: .atLeastOnce)) })
            assertDecodesAfterConnect(version, subscribe(version, entries), [.subscribe(expected)])
            assertDecodesAfterConnect(
                version, unsubscribe(version, Self.validFilters.flatMap(string)),
                [.unsubscribe(MQTTUnsubscribe(packetID: 1, filters: Self.validFilters))])
        }
    }

    func testSubscriptionOptions() {
        // 3.1.1: only the QoS bits.
        for options: UInt8 in [0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0xFC] {
            assertFailsAfterConnect(.v311, subscribe(.v311, string("a") + [options]), malformed, message: "reserved")
        }
        assertFailsAfterConnect(.v311, subscribe(.v311, string("a") + [3]), malformed, message: "QoS 3")
        // 5.0: bits 6 and 7 reserved, QoS 3 malformed, retain handling 3 a protocol error.
        for options: UInt8 in [0x40, 0x80, 0xC0] {
            assertFailsAfterConnect(.v5, subscribe(.v5, string("a") + [options]), malformed, message: "reserved")
        }
        assertFailsAfterConnect(.v5, subscribe(.v5, string("a") + [0x03]), malformed, message: "QoS 3")
        assertFailsAfterConnect(.v5, subscribe(.v5, string("a") + [0x30]), protocolError, message: "retain handling 3")
        // No local on a shared subscription.
        assertFailsAfterConnect(.v5, subscribe(.v5, string("$share/g/a") + [0x04]), protocolError, message: "no local")
        // Every allowed 5.0 options byte.
        for qos: UInt8 in 0...2 {
            for noLocal: UInt8 in 0...1 {
                for retainAsPublished: UInt8 in 0...1 {
                    for retainHandling: UInt8 in 0...2 {
                        let byte = qos | noLocal << 2 | retainAsPublished << 3 | retainHandling << 4
                        let options = MQTTSubscriptionOptions(
                            qos: MQTTQoS(rawValue: qos)!, noLocal: noLocal == 1,
                            retainAsPublished: retainAsPublished == 1,
                            retainHandling: retainHandling)
                        let expected = MQTTSubscribe(packetID: 1, filters: [("a", options)])
                        assertDecodesAfterConnect(.v5, subscribe(.v5, string("a") + [byte]), [.subscribe(expected)])
                        XCTAssertEqual(MQTTEncoder.optionsByte(options, version: .v5), byte)
                    }
                }
            }
        }
    }
}
