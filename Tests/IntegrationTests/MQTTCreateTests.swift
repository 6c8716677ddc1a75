import Foundation
import XCTest

/// `mqtt_create` (config/subd.yaml): `auto` makes a missing number on first publication (retained with RETAIN) or
/// exact subscription, told on `$SYS.number.created`; `never` refuses: 5.0 PUBACK 0x83, SUBACK 0x83; 3.1.1 acknowledged
/// and dropped, SUBACK 0x80.
final class MQTTCreateTests: MQTTTestCase {
    func testNeverRefusesPublicationsAndExactSubscriptionsToMissingNumbers() throws {
        let daemon = try startMQTTDaemon(mqttConfig(["mqtt_create: never"]))
        let line = try connect(daemon, "line")
        try subscribe(line, "missing.>")
        let (v5, _) = try rawConnected(daemon, version: 5, clientID: "never5")
        XCTAssertEqual(try v5.publish("missing/x", Array("a".utf8), qos: 1, packetID: 4)?.code, 0x83)
        let (v311, _) = try rawConnected(daemon, version: 4, clientID: "never4")
        try v311.send(MQTTEncode.publish(version: 4, topic: "missing/x", payload: Array("b".utf8), qos: 1, packetID: 5))
        XCTAssertEqual(
            try v311.nextFrame(), MQTTFrame(type: MQTTType.puback, flags: 0, body: [0, 5]), "3.1.1: acknowledged")
        try v311.publish("missing/x", Array("c".utf8), qos: 0)
        XCTAssertEqual(try v311.framesBeforePing(), [])
        XCTAssertEqual(try line.pushesBeforePing(), [], "nothing delivered")
        XCTAssertEqual(try listCounts(line), [:], "nothing created")

        XCTAssertEqual(try v5.subscribe([("missing/y", 1), ("missing/#", 1)]).codes, [0x83, 1], "exact refused")
        XCTAssertEqual(try v311.subscribe([("missing/y", 1), ("missing/+", 0)]).codes, [0x80, 0])
        let sub311 = try mosquittoSub(daemon, ["-V", "mqttv311", "-t", "missing/z"], label: "mosquitto 3.1.1")
        XCTAssertEqual(sub311.granted, [0x80])
        let sub5 = try mosquittoSub(daemon, ["-V", "mqttv5", "-t", "missing/z"], label: "mosquitto 5.0")
        XCTAssertEqual(sub5.granted, [0x83])
        XCTAssertEqual(try listCounts(line), [:])
        XCTAssertEqual(counter(try stats(line), "mqtt_refused"), 7)

        // Once the number exists, the wildcard subscriptions take its messages.
        try create(line, "missing.x")
        XCTAssertEqual(try line.pub("missing.x", Array("now".utf8)), .ok("3"))
        XCTAssertEqual(try v5.nextPublish().text, "now")
        XCTAssertEqual(try v311.nextPublish().text, "now")
    }

    func testAutoCreatesTheNumberAndTellsSys() throws {
        let daemon = try startMQTTDaemon()
        let watcher = try connect(daemon, "$SYS watcher")
        try subscribe(watcher, "$SYS.number.created")
        try mosquittoPublish(daemon, ["-V", "mqttv311", "-t", "auto/plain", "-m", "p"])
        try mosquittoPublish(daemon, ["-V", "mqttv5", "-q", "1", "-r", "-t", "auto/kept", "-m", "k"])
        let exact = try mosquittoSub(daemon, ["-V", "mqttv5", "-t", "auto/sub"])
        let wildcard = try mosquittoSub(daemon, ["-V", "mqttv311", "-t", "auto/wild/#", "-t", "auto/+/deep"])
        XCTAssertEqual(exact.granted, [0])
        XCTAssertEqual(wildcard.granted, [0, 0])
        XCTAssertEqual(
            try watcher.command("LIST auto.> kind"),
            .list(["auto.kept 0 retained 1", "auto.plain 0 plain", "auto.sub 1 plain"]), "wildcards create nothing")
        let events = try watcher.pushesBeforePing().compactMap(\.message).map { json($0) }
        XCTAssertEqual(events.map { $0["number"] as? String }, ["auto.plain", "auto.kept", "auto.sub"])
        XCTAssertEqual(events.map { $0["kind"] as? String }, ["plain", "retained", "plain"])
        XCTAssertEqual(events.map { $0["event"] as? String }, Array(repeating: "number.created", count: 3))
        XCTAssertEqual(try subctl(daemon, "get", ["auto.kept"]).output, "k\n")
    }
}
