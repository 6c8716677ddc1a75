import XCTest

@testable import SubscriptionMQTT

/// The encoder's fast path for deliveries (a PUBLISH header the payload is appended to) against the whole-packet
/// encoder, the sizes it announces, and the property list's bytes.
final class EncoderTests: XCTestCase {
    func testThePublishHeaderAndPayloadAreTheWholePacket() {
        var withSubscriptions = Fixtures.publishProperties
        withSubscriptions.subscriptionIdentifiers = [1, 300]
        let cases: [(MQTTQoS, UInt16?, MQTTProperties?)] = [
            (.atMostOnce, nil, nil), (.atLeastOnce, 1, nil), (.exactlyOnce, 65535, MQTTProperties()),
            (.atLeastOnce, 9, withSubscriptions),
        ]
        for version in [MQTTVersion.v311, .v5] {
            for (qos, packetID, properties) in cases {
                for (retain, dup) in [(false, false), (true, false), (true, qos != .atMostOnce)] {
                    for payloadCount in [0, 1, 200, 20_000] {
                        let payload = Fixtures.payload(payloadCount)
                        let publish = MQTTPublish(
                            topic: "room/é", qos: qos, retain: retain, dup: dup, packetID: packetID,
                            properties: properties ?? MQTTProperties(), payload: payload)
                        var bytes: [UInt8] = [0xAA]
                        MQTTEncoder.publishHeader(
                            topic: "room/é".utf8, qos: qos, retain: retain, dup: dup, packetID: packetID,
                            properties: properties, payloadCount: payloadCount, version: version, into: &bytes)
                        bytes += payload
                        XCTAssertEqual(bytes, [0xAA] + MQTTEncoder.encode(.publish(publish), version: version))
                        let propertiesCount =
                            version == .v5 ? MQTTEncoder.propertiesCount(properties ?? MQTTProperties()) : nil
                        XCTAssertEqual(
                            MQTTEncoder.encodedPublishCount(
                                topicCount: "room/é".utf8.count, packetID: packetID != nil,
                                propertiesCount: propertiesCount, payloadCount: payloadCount),
                            bytes.count - 1)
                    }
                }
            }
        }
    }

    func testAppendingKeepsWhatIsThere() {
        var bytes: [UInt8] = [1, 2, 3]
        MQTTEncoder.encode(.pingresp, version: .v5, into: &bytes)
        MQTTEncoder.encode(.puback(MQTTAck(packetID: 258)), version: .v5, into: &bytes)
        XCTAssertEqual(bytes, [1, 2, 3, 0xD0, 0x00, 0x40, 0x02, 0x01, 0x02])
    }

    func testPropertyBytes() {
        var properties = MQTTProperties()
        XCTAssertEqual(MQTTEncoder.propertiesBytes(properties), [])
        XCTAssertEqual(MQTTEncoder.propertiesCount(properties), 0)
        properties.userProperties = [MQTTUserProperty("a", "b")]
        properties.payloadFormatIndicator = 1
        properties.subscriptionIdentifiers = [128]
        properties.topicAlias = 0x0102
        // In identifier order, whatever order they were set in.
        let expected: [UInt8] = [
            0x01, 0x01, 0x0B, 0x80, 0x01, 0x23, 0x01, 0x02, 0x26, 0x00, 0x01, 0x61, 0x00, 0x01, 0x62,
        ]
        XCTAssertEqual(MQTTEncoder.propertiesBytes(properties), expected)
        XCTAssertEqual(MQTTEncoder.propertiesCount(properties), expected.count)
        for fixture in [
            Fixtures.connectProperties, Fixtures.willProperties, Fixtures.connAckProperties, Fixtures.publishProperties,
        ] {
            XCTAssertEqual(MQTTEncoder.propertiesBytes(fixture).count, MQTTEncoder.propertiesCount(fixture))
        }
    }

    func testVariableByteIntegerCounts() {
        for (value, count) in [
            (0, 1), (127, 1), (128, 2), (16_383, 2), (16_384, 3), (2_097_151, 3), (2_097_152, 4), (268_435_455, 4),
        ] {
            XCTAssertEqual(MQTTEncoder.variableByteIntegerCount(value), count, "\(value)")
            XCTAssertEqual(variableByteInteger(value).count, count, "\(value)")
        }
    }
}
