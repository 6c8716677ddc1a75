import Foundation
import XCTest

/// The topic map (docs/PROTOCOL.md, MQTT, Topics and numbers) end to end: levels and tokens, the escapes both ways,
/// numbers without a topic kept from MQTT clients, `a/#` matching `a` (also when `a` is created after the
/// subscription), and UNSUBSCRIBE.
final class MQTTTopicMapTests: MQTTTestCase {
    func testTopicsAndNumbersMapOneToOneBothWays() throws {
        let pairs = [
            ("sensors/room 1/temp.c", "sensors.room%201.temp%2Ec"), ("a//b", "a.%.b"), ("/lead", "%.lead"),
            ("x/*/y", "x.%2A.y"), ("x/>", "x.%3E"), ("100%/caf\u{e9}", "100%25.caf\u{e9}"), ("s/a*b", "s.a*b"),
        ]
        let daemon = try startMQTTDaemon(mqttConfig(numbers: pairs.map(\.1) + ["50%off", "C#"]))
        let client = try pahoConnected(daemon, ["version": 5, "client_id": "mapper"])
        XCTAssertEqual(try client.subscribe("#").codes, [0])
        let line = try connect(daemon, "line")
        try subscribe(line, ">")
        for (topic, number) in pairs {
            XCTAssertEqual(try line.pub(number, Array(number.utf8)), .ok("2"), number)
            let got = try client.nextPublish()
            XCTAssertEqual([got.topic, got.text], [topic, number], "number \(number) is topic \(topic)")
            XCTAssertEqual(try line.nextMessage().number, number)
            try client.publish(topic, Array(topic.utf8))
            XCTAssertEqual(try nextMessage(line, on: number).text, topic, "topic \(topic) is number \(number)")
            XCTAssertEqual(try client.nextPublish().topic, topic, "and back to the MQTT subscriber")
        }
        // Numbers that no topic maps to are not delivered to MQTT clients (nor counted).
        for number in ["50%off", "C#"] {
            XCTAssertEqual(try line.pub(number, Array("x".utf8)), .ok("1"), number)
            XCTAssertEqual(try line.nextMessage().number, number)
        }
        XCTAssertEqual(try client.framesBeforePing(), [], "no topic: not delivered")
    }

    func testAHashFilterMatchesItsParentLevelAlsoWhenItIsCreatedLater() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["SCIENCE", "SCIENCE.physics"]))
        let sub = try mosquittoSub(daemon, ["-V", "mqttv5", "-t", "SCIENCE/#", "-t", "late/#"])
        let line = try connect(daemon, "line")
        XCTAssertEqual(try line.pub("SCIENCE", Array("parent".utf8)), .ok("1"))
        XCTAssertEqual(try line.pub("SCIENCE.physics", Array("child".utf8)), .ok("1"))
        XCTAssertEqual(try sub.next().topic, "SCIENCE")
        XCTAssertEqual(try sub.next().topic, "SCIENCE/physics")
        try create(line, "late", "late.x")
        XCTAssertEqual(try line.pub("late", Array("created later".utf8)), .ok("1"))
        XCTAssertEqual(
            try sub.next(),
            MosquittoSub.Received(topic: "late", qos: 0, retain: false, payload: Array("created later".utf8)))
        XCTAssertEqual(try line.pub("late.x", Array("below".utf8)), .ok("1"))
        XCTAssertEqual(try sub.next().topic, "late/x")
    }

    func testUnsubscribeEndsTheFilterAndSaysWhenThereWasNone() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["u.a", "u.b"]))
        let (client, _) = try rawConnected(daemon, version: 5, clientID: "unsub")
        XCTAssertEqual(try client.subscribe([("u/a", 0), ("u/+", 0)]).codes, [0, 0])
        try client.send(
            MQTTEncode.packet(
                MQTTType.unsubscribe, flags: 2,
                MQTTEncode.two(8) + [0] + MQTTEncode.string("u/+") + MQTTEncode.string("u/none")))
        let unsubAck = try client.next(MQTTType.unsuback).subAck(version: 5, type: MQTTType.unsuback)
        XCTAssertEqual(unsubAck.packetID, 8)
        XCTAssertEqual(unsubAck.codes, [0x00, 0x11], "0x11: no subscription existed")
        let line = try connect(daemon, "line")
        XCTAssertEqual(try line.pub("u.b", Array("b".utf8)), .ok("0"), "u/+ is gone")
        XCTAssertEqual(try line.pub("u.a", Array("a".utf8)), .ok("1"), "u/a stays")
        XCTAssertEqual(try client.framesBeforePing().map { try $0.publish(version: 5).text }, ["a"])
    }
}
