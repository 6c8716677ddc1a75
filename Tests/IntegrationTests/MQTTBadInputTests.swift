import Foundation
import XCTest

/// Bad input (docs/PROTOCOL.md, MQTT, Bad input; 3.1.1 section 4.8, 5.0 section 4.13): each violation closes that
/// connection, a connected 5.0 client told the reason code first with DISCONNECT, a 3.1.1 one just closed; the
/// message accepted just before the bad packet (in the same write) is delivered; every other client, line and MQTT,
/// goes on, and STATS `protocol_errors` counts each.
final class MQTTBadInputTests: MQTTTestCase {
    /// One bad packet and the reason code a 5.0 client is told.
    private struct Case: Sendable {
        var name: String
        var bytes: @Sendable (UInt8) -> [UInt8]
        var reasonCode: UInt8
    }

    /// max_payload 4096 + max_line 1024: the largest packet is 5,120 bytes.
    private static let cases: [Case] = [
        Case(
            name: "a remaining length in 5 bytes", bytes: { _ in [0x30, 0xFF, 0xFF, 0xFF, 0xFF, 0x01] },
            reasonCode: 0x81),
        Case(
            name: "a packet over the maximum size", bytes: { _ in [0x30] + MQTTEncode.varint(6_000) },
            reasonCode: 0x95),
        Case(
            name: "invalid UTF-8 in a PUBLISH topic",
            bytes: { MQTTEncode.publish(version: $0, topic: [0x62, 0x2F, 0xFF], payload: [0x78]) }, reasonCode: 0x81),
        Case(
            name: "a wildcard in a PUBLISH topic",
            bytes: { MQTTEncode.publish(version: $0, topic: "bad/#", payload: [0x78]) }, reasonCode: 0x90),
        Case(name: "a second CONNECT", bytes: { MQTTEncode.connect(version: $0, clientID: "again") }, reasonCode: 0x82),
        Case(name: "packet type 0", bytes: { _ in [0x00, 0x00] }, reasonCode: 0x81),
        Case(
            name: "a QoS 3 PUBLISH",
            bytes: { version in
                var packet = MQTTEncode.publish(version: version, topic: "bad/t", payload: [0x78])
                packet[0] = 0x36
                return packet
            }, reasonCode: 0x81),
    ]

    /// A daemon with the limits above, a line subscriber and an MQTT subscriber of `bad.t` and `ok.t`.
    private func start() throws -> (Daemon, LineClient, MQTTRawClient) {
        var config = mqttConfig(numbers: ["bad.t", "ok.t"])
        config.maxPayload = 4_096
        config.maxLine = 1_024
        let daemon = try startMQTTDaemon(config)
        let line = try connect(daemon, "line witness")
        try subscribe(line, "bad.t", "ok.t")
        let (witness, ack) = try rawConnected(daemon, version: 5, clientID: "witness")
        XCTAssertEqual(ack.properties.integer(MQTTProperty.maximumPacketSize), 5_120)
        XCTAssertEqual(try witness.subscribe([("bad/t", 0), ("ok/t", 0)]).codes, [0, 0])
        return (daemon, line, witness)
    }

    /// The others go on: a line publication reaches both witnesses.
    private func assertUnaffected(
        _ line: LineClient, _ witness: MQTTRawClient, _ context: String, file: StaticString = #filePath,
        line number: UInt = #line
    ) throws {
        let text = "alive after \(context)"
        XCTAssertEqual(try line.pub("ok.t", Array(text.utf8)), .ok("2"), context, file: file, line: number)
        XCTAssertEqual(try nextMessage(line, on: "ok.t").text, text, context, file: file, line: number)
        XCTAssertEqual(try witness.nextPublish().text, text, context, file: file, line: number)
    }

    func testEachViolationClosesOnlyItsConnectionAfterServingWhatCameBefore() throws {
        let (daemon, line, witness) = try start()
        let before = try stats(line)
        for version: UInt8 in [5, 4] {
            for (index, bad) in Self.cases.enumerated() {
                let context = "v\(version), \(bad.name)"
                let (client, _) = try rawConnected(daemon, version: version, clientID: "bad\(version)-\(index)")
                let accepted = "before \(context)"
                try client.send(
                    MQTTEncode.publish(version: version, topic: "bad/t", payload: Array(accepted.utf8))
                        + bad.bytes(version))
                let told = try client.packetsUntilClosed()
                if version == 5 {
                    XCTAssertEqual(try told.map { try $0.disconnect().code }, [bad.reasonCode], context)
                    XCTAssertNotNil(try told.first?.disconnect().properties.reasonString, "\(context): says why")
                } else {
                    XCTAssertEqual(told, [], "\(context): closed, nothing sent")
                }
                XCTAssertEqual(try nextMessage(line, on: "bad.t").text, accepted, context)
                XCTAssertEqual(try witness.nextPublish().text, accepted, context)
                try assertUnaffected(line, witness, context)
            }
        }
        assertCounter("protocol_errors", grewBy: 2 * Self.cases.count, from: before, to: try stats(line))
        try eventually("only the witness's session is left") { counter(try stats(line), "mqtt_sessions") == 1 }
    }

    func testAPacketBeforeConnectClosesWithNothingSent() throws {
        let (daemon, line, witness) = try start()
        let firsts: [(String, [UInt8])] = [
            ("PINGREQ", MQTTEncode.pingreq),
            ("PUBLISH", MQTTEncode.publish(version: 4, topic: "bad/t", payload: Array("never".utf8))),
            ("SUBSCRIBE", MQTTEncode.subscribe(version: 4, packetID: 1, [("bad/t", 0)])),
            ("CONNACK", [0x20, 0x02, 0x00, 0x00]),
        ]
        for (name, bytes) in firsts {
            let client = try raw(daemon, version: 4, name)
            try client.send(bytes)
            XCTAssertEqual(try client.packetsUntilClosed(), [], "\(name) first: closed, nothing sent")
            try assertUnaffected(line, witness, "\(name) before CONNECT")
        }
        XCTAssertEqual(try line.pushesBeforePing(), [], "the PUBLISH before CONNECT was not delivered")
    }
}
