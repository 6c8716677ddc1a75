import Foundation
import XCTest

/// What a 5.0 client changes on the way out and what expires meanwhile: DISCONNECT's Session Expiry Interval (5.0
/// section 3.14.2.2.2), and the Message Expiry Interval of a message queued for an absent client (3.3.2.3.3).
final class MQTTExpiryTests: MQTTTestCase {
    private static func expiry(_ seconds: UInt32) -> MQTTProperty {
        MQTTProperty(id: MQTTProperty.sessionExpiryInterval, value: .four(seconds))
    }

    func testADisconnectMayEndTheSessionButNotGiveOneAnExpiry() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["chg.t"]))
        let line = try connect(daemon, "line")
        let (client, _) = try rawConnected(daemon, version: 5, clientID: "changer", properties: [Self.expiry(60)])
        XCTAssertEqual(try client.subscribe([("chg/t", 1)]).codes, [1])
        try client.send(MQTTEncode.disconnect(version: 5, properties: [Self.expiry(0)]))
        XCTAssertEqual(try client.packetsUntilClosed(), [])
        try eventually("the session ends with its connection") { counter(try stats(line), "mqtt_sessions") == 0 }
        let (again, ack) = try rawConnected(
            daemon, version: 5, clientID: "changer", clean: false, properties: [Self.expiry(60)])
        XCTAssertFalse(ack.sessionPresent, "DISCONNECT set its expiry to 0")
        XCTAssertEqual(try line.pub("chg.t", Array("x".utf8)), .ok("0"))
        XCTAssertEqual(try again.framesBeforePing(), [])

        // No expiry in CONNECT, one in DISCONNECT: a protocol error, told with DISCONNECT 0x82.
        let (zero, _) = try rawConnected(daemon, version: 5, clientID: "zero")
        try zero.send(MQTTEncode.disconnect(version: 5, properties: [Self.expiry(30)]))
        XCTAssertEqual(try zero.packetsUntilClosed().map { try $0.disconnect().code }, [0x82])
    }

    func testAQueuedMessagePastItsExpiryIsDroppedAndTheOthersCountItDown() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["exp.m"]))
        let watcher = try disconnectWatcher(daemon)
        let (sub, _) = try rawConnected(daemon, version: 5, clientID: "absent", properties: [Self.expiry(60)])
        XCTAssertEqual(try sub.subscribe([("exp/m", 1)]).codes, [1])
        sub.close()
        try waitForDisconnect(watcher, of: "absent")
        let publisher = try pahoConnected(daemon, ["version": 5, "client_id": "expirer"])
        for (text, seconds) in [("short", 1), ("long", 60)] {
            try publisher.publish("exp/m", Array(text.utf8), qos: 1, properties: ["MessageExpiryInterval": seconds])
            XCTAssertEqual(try publisher.ack(MQTTType.puback).code, 0, "\(text): queued for the absent session")
        }
        let published = Date()
        usleep(UInt32(max(0, 1.3 - Date().timeIntervalSince(published)) * 1_000_000))
        let (back, ack) = try rawConnected(
            daemon, version: 5, clientID: "absent", clean: false, properties: [Self.expiry(60)])
        XCTAssertTrue(ack.sessionPresent)
        let delivered = try back.framesBeforePing().map { try $0.publish(version: 5) }
        XCTAssertEqual(delivered.map(\.text), ["long"], "the message past its 1 s expiry was dropped")
        let left = delivered.first?.properties.integer(MQTTProperty.messageExpiryInterval)
        XCTAssertNotNil(left)
        XCTAssertTrue((50...59).contains(left ?? 0), "counted down by the time it waited: \(left ?? 0)")
    }
}
