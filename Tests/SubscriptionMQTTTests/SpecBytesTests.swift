import XCTest

@testable import SubscriptionMQTT

/// The exact bytes of packets, from the specifications' examples or computed by hand from their layouts, encoded
/// and decoded (in every feeding mode).
final class SpecBytesTests: XCTestCase {
    /// Asserts that `packet` encodes for `version` to exactly `bytes`, and that `bytes` decode back to it.
    private func assertBytes(
        _ packet: MQTTPacket, _ version: MQTTVersion, _ bytes: [UInt8], setup: DecoderSetup? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(
            hex(MQTTEncoder.encode(packet, version: version)), hex(bytes), "encoded", file: file, line: line)
        if let setup {
            assertDecodes(bytes, [packet], setup: setup, file: file, line: line)
        } else if case .connect = packet {
            assertDecodes(bytes, [packet], file: file, line: line)
        } else {
            assertDecodesAfterConnect(version, bytes, [packet], file: file, line: line)
        }
    }

    /// `bytes` as spaced uppercase hex, for readable failures.
    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined(separator: " ")
    }

    func testConnectAsMosquittoSubSendsIt() {
        // mosquitto_sub -V mqttv311 -i client -t test: clean session, keep alive 60.
        let bytes: [UInt8] = [
            0x10, 0x12, 0x00, 0x04, 0x4D, 0x51, 0x54, 0x54, 0x04, 0x02, 0x00, 0x3C,
            0x00, 0x06, 0x63, 0x6C, 0x69, 0x65, 0x6E, 0x74,
        ]
        assertBytes(.connect(MQTTConnect(version: .v311, keepAlive: 60, clientID: "client")), .v311, bytes)
    }

    func testConnect5WithPropertiesWillAndCredentials() {
        var properties = MQTTProperties()
        properties.sessionExpiryInterval = 10
        var will = MQTTWill(topic: "w", payload: [0xFF], qos: .atLeastOnce, retain: true)
        will.properties.willDelayInterval = 5
        let connect = MQTTConnect(
            version: .v5, cleanStart: true, keepAlive: 30, clientID: "id", will: will, username: "u",
            password: [0x00, 0x01], properties: properties)
        let bytes: [UInt8] =
            [0x10, 0x27]
            + [0x00, 0x04, 0x4D, 0x51, 0x54, 0x54, 0x05]  // "MQTT", level 5
            + [0xEE]  // user name, password, will retain, will QoS 1, will, clean start
            + [0x00, 0x1E]  // keep alive 30
            + [0x05, 0x11, 0x00, 0x00, 0x00, 0x0A]  // session expiry 10
            + [0x00, 0x02, 0x69, 0x64]  // client identifier "id"
            + [0x05, 0x18, 0x00, 0x00, 0x00, 0x05]  // will delay 5
            + [0x00, 0x01, 0x77]  // will topic "w"
            + [0x00, 0x01, 0xFF]  // will payload
            + [0x00, 0x01, 0x75]  // user name "u"
            + [0x00, 0x02, 0x00, 0x01]  // password
        XCTAssertEqual(bytes.count, 2 + 0x27)
        assertBytes(.connect(connect), .v5, bytes)
    }

    func testTheUTF8ExampleOfSection154() {
        // "A𪛔" (U+0041, U+2A6D4) is 00 05 41 F0 AA 9B 94.
        let bytes: [UInt8] =
            [0x10, 0x11, 0x00, 0x04, 0x4D, 0x51, 0x54, 0x54, 0x04, 0x02, 0x00, 0x00]
            + [0x00, 0x05, 0x41, 0xF0, 0xAA, 0x9B, 0x94]
        assertBytes(.connect(MQTTConnect(version: .v311, keepAlive: 0, clientID: "A\u{2A6D4}")), .v311, bytes)
    }

    func testConnAck() {
        assertBytes(.connack(MQTTConnAck()), .v311, [0x20, 0x02, 0x00, 0x00], setup: .client(.v311))
        assertBytes(
            .connack(MQTTConnAck(sessionPresent: true, reasonCode: 0)), .v311, [0x20, 0x02, 0x01, 0x00],
            setup: .client(.v311))
        assertBytes(
            .connack(MQTTConnAck(reasonCode: MQTTReasonCode.ConnectReturn311.notAuthorized)), .v311,
            [0x20, 0x02, 0x00, 0x05], setup: .client(.v311))
        // 5.0: the property length is always there.
        assertBytes(.connack(MQTTConnAck()), .v5, [0x20, 0x03, 0x00, 0x00, 0x00], setup: .client(.v5))
        var properties = MQTTProperties()
        properties.receiveMaximum = 10
        assertBytes(
            .connack(MQTTConnAck(properties: properties)), .v5, [0x20, 0x06, 0x00, 0x00, 0x03, 0x21, 0x00, 0x0A],
            setup: .client(.v5))
    }

    func testPingAndDisconnect() {
        assertBytes(.pingreq, .v311, [0xC0, 0x00])
        assertBytes(.pingresp, .v311, [0xD0, 0x00], setup: .client(.v311))
        assertBytes(.pingresp, .v5, [0xD0, 0x00], setup: .client(.v5))
        assertBytes(.disconnect(MQTTDisconnect()), .v311, [0xE0, 0x00])
        assertBytes(.disconnect(MQTTDisconnect()), .v5, [0xE0, 0x00])
        assertBytes(.disconnect(MQTTDisconnect(reasonCode: 0x04)), .v5, [0xE0, 0x01, 0x04])
        var properties = MQTTProperties()
        properties.sessionExpiryInterval = 0
        assertBytes(
            .disconnect(MQTTDisconnect(properties: properties)), .v5,
            [0xE0, 0x07, 0x00, 0x05, 0x11, 0x00, 0x00, 0x00, 0x00])
        // 3.1.1 has no reason code: a DISCONNECT with one is written without it.
        XCTAssertEqual(MQTTEncoder.encode(.disconnect(MQTTDisconnect(reasonCode: 0x04)), version: .v311), [0xE0, 0x00])
    }

    func testAcknowledgements() {
        // 5.0's short form: reason 0 and no properties leave both out.
        assertBytes(.puback(MQTTAck(packetID: 1)), .v5, [0x40, 0x02, 0x00, 0x01])
        assertBytes(.puback(MQTTAck(packetID: 1)), .v311, [0x40, 0x02, 0x00, 0x01])
        assertBytes(.pubrec(MQTTAck(packetID: 0x1234, reasonCode: 0x10)), .v5, [0x50, 0x03, 0x12, 0x34, 0x10])
        assertBytes(.pubrel(MQTTAck(packetID: 2)), .v311, [0x62, 0x02, 0x00, 0x02])
        var properties = MQTTProperties()
        properties.reasonString = "x"
        assertBytes(
            .pubcomp(MQTTAck(packetID: 3, reasonCode: 0x92, properties: properties)), .v5,
            [0x70, 0x08, 0x00, 0x03, 0x92, 0x04, 0x1F, 0x00, 0x01, 0x78])
        // In 3.1.1 the reason code is left out.
        XCTAssertEqual(
            MQTTEncoder.encode(.pubrec(MQTTAck(packetID: 5, reasonCode: 0x80)), version: .v311),
            [0x50, 0x02, 0x00, 0x05])
    }

    func testPublish() {
        // QoS 0, topic "a/b", payload "hi".
        assertBytes(
            .publish(MQTTPublish(topic: "a/b", payload: [0x68, 0x69])), .v311,
            [0x30, 0x07, 0x00, 0x03, 0x61, 0x2F, 0x62, 0x68, 0x69])
        // QoS 1, retain, packet identifier 10, 5.0 with topic alias 1.
        var properties = MQTTProperties()
        properties.topicAlias = 1
        assertBytes(
            .publish(
                MQTTPublish(
                    topic: "a/b", qos: .atLeastOnce, retain: true, packetID: 10, properties: properties,
                    payload: [0x68, 0x69])), .v5,
            [0x33, 0x0D, 0x00, 0x03, 0x61, 0x2F, 0x62, 0x00, 0x0A, 0x03, 0x23, 0x00, 0x01, 0x68, 0x69])
        // QoS 2 with DUP, 5.0 without properties: a property length of 0.
        assertBytes(
            .publish(MQTTPublish(topic: "t", qos: .exactlyOnce, dup: true, packetID: 1, payload: [])), .v5,
            [0x3C, 0x06, 0x00, 0x01, 0x74, 0x00, 0x01, 0x00])
    }

    func testSubscribeAndUnsubscribe() {
        assertBytes(
            .subscribe(MQTTSubscribe(packetID: 1, filters: [("a/b", MQTTSubscriptionOptions(qos: .atLeastOnce))])),
            .v311, [0x82, 0x08, 0x00, 0x01, 0x00, 0x03, 0x61, 0x2F, 0x62, 0x01])
        let options = MQTTSubscriptionOptions(
            qos: .exactlyOnce, noLocal: true, retainAsPublished: true, retainHandling: 2)
        assertBytes(
            .subscribe(MQTTSubscribe(packetID: 2, filters: [("#", options)])), .v5,
            [0x82, 0x07, 0x00, 0x02, 0x00, 0x00, 0x01, 0x23, 0x2E])
        assertBytes(
            .unsubscribe(MQTTUnsubscribe(packetID: 3, filters: ["a/+"])), .v311,
            [0xA2, 0x07, 0x00, 0x03, 0x00, 0x03, 0x61, 0x2F, 0x2B])
        assertBytes(
            .unsubscribe(MQTTUnsubscribe(packetID: 3, filters: ["a/+"])), .v5,
            [0xA2, 0x08, 0x00, 0x03, 0x00, 0x00, 0x03, 0x61, 0x2F, 0x2B])
    }

    func testSubAckAndUnsubAck() {
        assertBytes(
            .suback(MQTTSubAck(packetID: 1, reasonCodes: [0x01, 0x80])), .v311, [0x90, 0x04, 0x00, 0x01, 0x01, 0x80],
            setup: .client(.v311))
        assertBytes(
            .suback(MQTTSubAck(packetID: 1, reasonCodes: [0x02])), .v5, [0x90, 0x04, 0x00, 0x01, 0x00, 0x02],
            setup: .client(.v5))
        assertBytes(.unsuback(MQTTUnsubAck(packetID: 7)), .v311, [0xB0, 0x02, 0x00, 0x07], setup: .client(.v311))
        assertBytes(
            .unsuback(MQTTUnsubAck(packetID: 7, reasonCodes: [0x00, 0x11])), .v5,
            [0xB0, 0x05, 0x00, 0x07, 0x00, 0x00, 0x11], setup: .client(.v5))
    }

    func testAuth() {
        assertBytes(.auth(MQTTAuth()), .v5, [0xF0, 0x00])
        var properties = MQTTProperties()
        properties.authenticationMethod = "m"
        assertBytes(
            .auth(MQTTAuth(reasonCode: 0x18, properties: properties)), .v5,
            [0xF0, 0x06, 0x18, 0x04, 0x15, 0x00, 0x01, 0x6D])
    }
}
