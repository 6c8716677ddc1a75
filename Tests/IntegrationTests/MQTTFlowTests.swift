import Foundation
import XCTest

/// Flow control of MQTT 5.0: the client's Receive Maximum bounds the QoS 1 messages in flight towards it (section
/// 3.3.4, 4.9), mqtt_receive_maximum bounds those in flight towards subd, and a message larger than the client's
/// Maximum Packet Size is not sent to it (3.1.2.11.4).
final class MQTTFlowTests: MQTTTestCase {
    func testASubscribersReceiveMaximumBoundsTheMessagesInFlight() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["rm.t"]))
        let (sub, _) = try rawConnected(
            daemon, version: 5, clientID: "window",
            properties: [.init(id: MQTTProperty.receiveMaximum, value: .two(2))])
        XCTAssertEqual(try sub.subscribe([("rm/t", 1)]).codes, [1])
        let (publisher, _) = try rawConnected(daemon, version: 5, clientID: "rm-pub")
        for index in 0..<5 {
            let ack = try publisher.publish("rm/t", Array("m\(index)".utf8), qos: 1, packetID: UInt16(10 + index))
            XCTAssertEqual(ack, MQTTAck(packetID: UInt16(10 + index), code: 0), "m\(index): taken for the subscriber")
        }
        // Everything the server had for the subscriber went out before the PINGRESP: two messages, no more.
        let first = try sub.framesBeforePing().map { try $0.publish(version: 5) }
        XCTAssertEqual(first.map(\.text), ["m0", "m1"])
        XCTAssertEqual(first.map(\.qos), [1, 1])
        guard first.count == 2, let m0 = first[0].packetID, let m1 = first[1].packetID else { return }
        try sub.send(MQTTEncode.ack(MQTTType.puback, packetID: m0))
        let second = try sub.framesBeforePing().map { try $0.publish(version: 5) }
        XCTAssertEqual(second.map(\.text), ["m2"], "one acknowledged, one more sent")
        try sub.send(MQTTEncode.ack(MQTTType.puback, packetID: 999))
        XCTAssertEqual(try sub.framesBeforePing(), [], "a PUBACK of no message in flight frees nothing")
        try sub.send(MQTTEncode.ack(MQTTType.puback, packetID: m1))
        let third = try sub.framesBeforePing().map { try $0.publish(version: 5) }
        XCTAssertEqual(third.map(\.text), ["m3"])
        for publish in second + third {
            try sub.send(MQTTEncode.ack(MQTTType.puback, packetID: try XCTUnwrap(publish.packetID)))
        }
        let last = try sub.framesBeforePing().map { try $0.publish(version: 5) }
        XCTAssertEqual(last.map(\.text), ["m4"])
        XCTAssertEqual(Set((first + second + third + last).compactMap(\.packetID)).count, 5, "distinct identifiers")
    }

    func testAClientPastMqttReceiveMaximumIsDisconnectedWith0x93() throws {
        // 5.0 section 3.3.4: more than Receive Maximum QoS 1 and 2 PUBLISH packets "where it has not sent a PUBACK or
        // PUBCOMP in response" is a protocol error (0x93). A QoS 2 message counts until its PUBCOMP.
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["in.t"], ["mqtt_receive_maximum: 2"]))
        let (client, ack) = try rawConnected(daemon, version: 5, clientID: "flood2")
        XCTAssertEqual(ack.properties.integer(MQTTProperty.receiveMaximum), 2)
        for id: UInt16 in [1, 2] {
            try client.send(MQTTEncode.publish(version: 5, topic: "in/t", payload: [0x41], qos: 2, packetID: id))
            XCTAssertEqual(try client.ack(MQTTType.pubrec).packetID, id)
        }
        try client.send(MQTTEncode.publish(version: 5, topic: "in/t", payload: [0x42], qos: 2, packetID: 3))
        let told = try client.packetsUntilClosed()
        XCTAssertEqual(try told.map { try $0.disconnect().code }, [0x93], "a third QoS 2 message before any PUBREL")
    }

    func testAMessageOverTheClientsMaximumPacketSizeIsNotSentToIt() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["mps.big", "mps.small"]))
        let small = try pahoConnected(
            daemon, ["version": 5, "client_id": "small", "properties": ["MaximumPacketSize": 100]], label: "small")
        XCTAssertEqual(try small.subscribe("mps/#", qos: 1).codes, [1])
        let large = try pahoConnected(daemon, ["version": 5, "client_id": "large"], label: "large")
        XCTAssertEqual(try large.subscribe("mps/#", qos: 1).codes, [1])
        let big = [UInt8](repeating: 0x62, count: 1_000)
        let line = try connect(daemon, "line")
        XCTAssertEqual(try line.pub("mps.big", big), .ok("1"), "not counted for the client it is not sent to")
        XCTAssertEqual(try line.pub("mps.small", Array("tiny".utf8)), .ok("2"))
        let (publisher, _) = try rawConnected(daemon, version: 5, clientID: "mps-pub")
        XCTAssertEqual(try publisher.publish("mps/big", big, qos: 1, packetID: 1)?.code, 0x00)
        XCTAssertEqual(try publisher.publish("mps/small", Array("tiny1".utf8), qos: 1, packetID: 2)?.code, 0x00)

        let toSmall = try small.framesBeforePing().map { try $0.publish(version: 5) }
        XCTAssertEqual(toSmall.map(\.text), ["tiny", "tiny1"], "the 1000-byte messages were not sent")
        let toLarge = try large.framesBeforePing().map { try $0.publish(version: 5) }
        XCTAssertEqual(toLarge.map(\.payload), [big, Array("tiny".utf8), big, Array("tiny1".utf8)])
    }

    func testQoS2IsDeliveredExactlyOnceThroughItsFourPackets() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["q2.t"]))
        for version: UInt8 in [4, 5] {
            let (sub, _) = try rawConnected(daemon, version: version, clientID: "q2-sub-\(version)")
            XCTAssertEqual(try sub.subscribe([("q2/t", 2)]).codes, [2])
            let (publisher, _) = try rawConnected(daemon, version: version, clientID: "q2-pub-\(version)")
            let message = MQTTEncode.publish(
                version: version, topic: Array("q2/t".utf8), payload: Array("once".utf8), qos: 2, packetID: 5)
            try publisher.send(message)
            XCTAssertEqual(try publisher.ack(MQTTType.pubrec), MQTTAck(packetID: 5, code: 0), "v\(version)")
            // The same packet identifier again before its PUBREL: a duplicate, acknowledged and not delivered again.
            var duplicate = message
            duplicate[0] |= 0x08
            try publisher.send(duplicate)
            XCTAssertEqual(try publisher.ack(MQTTType.pubrec).packetID, 5, "v\(version): PUBREC again")
            try publisher.send(MQTTEncode.ack(MQTTType.pubrel, packetID: 5))
            XCTAssertEqual(try publisher.ack(MQTTType.pubcomp), MQTTAck(packetID: 5, code: 0))

            let delivered = try sub.framesBeforePing().map { try $0.publish(version: version) }
            XCTAssertEqual(delivered.map(\.text), ["once"], "v\(version): exactly once")
            XCTAssertEqual(delivered.map(\.qos), [2])
            let id = try XCTUnwrap(delivered.first?.packetID)
            try sub.send(MQTTEncode.ack(MQTTType.pubrec, packetID: id))
            let pubrel = try sub.next(MQTTType.pubrel)
            XCTAssertEqual(pubrel.flags, 2, "PUBREL's fixed header flags")
            XCTAssertEqual(try pubrel.ack(MQTTType.pubrel, version: version).packetID, id)
            try sub.send(MQTTEncode.ack(MQTTType.pubcomp, packetID: id))

            // Released, the identifier is free for a new message.
            try publisher.send(
                MQTTEncode.publish(
                    version: version, topic: Array("q2/t".utf8), payload: Array("twice".utf8), qos: 2, packetID: 5))
            XCTAssertEqual(try publisher.ack(MQTTType.pubrec).packetID, 5)
            XCTAssertEqual(try sub.nextPublish().text, "twice", "v\(version): a new message with the identifier")
        }
    }
}
