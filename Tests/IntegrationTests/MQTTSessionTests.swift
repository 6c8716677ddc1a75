import Foundation
import XCTest

/// Sessions (3.1.1 section 3.1.2.4, 5.0 sections 3.1.2.4, 3.1.2.11.2 and 4.1): a persistent session keeps its
/// subscriptions and queues QoS 1 messages while its client is away (QoS 0 ones are dropped), a clean one keeps
/// nothing, a 5.0 session expires after its interval, an unacknowledged message is sent again with DUP and its packet
/// identifier, and a second connection with the same client identifier takes the session over.
final class MQTTSessionTests: MQTTTestCase {
    private static func expiry(_ seconds: UInt32) -> MQTTProperty {
        MQTTProperty(id: MQTTProperty.sessionExpiryInterval, value: .four(seconds))
    }

    func testAPersistentSessionOf311QueuesQoS1WhileAwayAndDropsQoS0() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["news.a"]))
        let line = try connect(daemon, "line")
        let watcher = try disconnectWatcher(daemon)
        let away = try mosquittoSub(daemon, ["-V", "mqttv311", "-c", "-i", "keeper", "-q", "1", "-t", "news/a", "-E"])
        XCTAssertEqual(away.granted, [1])
        XCTAssertEqual(away.child.waitForExit(timeout: 10), 0, "mosquitto_sub -E ends after its SUBACK")
        try waitForDisconnect(watcher, of: "keeper")
        XCTAssertEqual(counter(try stats(line), "mqtt_sessions"), 1, "the session is kept without its connection")
        XCTAssertEqual(try listCounts(line)["news.a"], 1, "and its subscription")
        try mosquittoPublish(daemon, ["-q", "1", "-t", "news/a", "-m", "away-1"])
        try mosquittoPublish(daemon, ["-q", "0", "-t", "news/a", "-m", "away-qos0"])
        XCTAssertEqual(try line.pub("news.a", Array("away-line".utf8)), .ok("0"), "QoS 0: not counted, dropped")
        try mosquittoPublish(daemon, ["-q", "1", "-t", "news/a", "-m", "away-2"])

        let back = try raw(daemon, version: 4, "keeper again")
        XCTAssertEqual(try back.connect(clientID: "keeper", clean: false), MQTTConnAck(sessionPresent: true, code: 0))
        let queued = try back.publishes(before: MQTTType.pingresp, timeout: 5, sendingPing: true)
        XCTAssertEqual(queued.map(\.text), ["away-1", "away-2"], "the QoS 1 messages, in order; no QoS 0 one")
        XCTAssertEqual(queued.map(\.qos), [1, 1])
        XCTAssertEqual(queued.map(\.dup), [false, false], "sent for the first time")
        for publish in queued { try back.send(MQTTEncode.ack(MQTTType.puback, packetID: publish.packetID!)) }
        XCTAssertEqual(try line.pub("news.a", Array("live".utf8)), .ok("1"))
        XCTAssertEqual(try back.nextPublish().text, "live")
    }

    func testACleanSessionKeepsNothing() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["news.a"]))
        let line = try connect(daemon, "line")
        let watcher = try disconnectWatcher(daemon)
        let clean = try mosquittoSub(daemon, ["-V", "mqttv311", "-i", "fresh", "-q", "1", "-t", "news/a", "-E"])
        XCTAssertEqual(clean.child.waitForExit(timeout: 10), 0)
        try waitForDisconnect(watcher, of: "fresh")
        XCTAssertEqual(counter(try stats(line), "mqtt_sessions"), 0, "the clean session ended with its connection")
        try mosquittoPublish(daemon, ["-q", "1", "-t", "news/a", "-m", "nobody"])
        let back = try raw(daemon, version: 4, "fresh again")
        XCTAssertEqual(try back.connect(clientID: "fresh", clean: false), MQTTConnAck(sessionPresent: false, code: 0))
        XCTAssertEqual(try line.pub("news.a", Array("not subscribed".utf8)), .ok("0"))
        XCTAssertEqual(try back.framesBeforePing(), [], "nothing queued, no subscription")

        // A persistent session, then a clean session: the old one is discarded with what it queued.
        XCTAssertEqual(try back.subscribe([("news/a", 1)]).codes, [1])
        back.close()
        try waitForDisconnect(watcher, of: "fresh")
        XCTAssertEqual(counter(try stats(line), "mqtt_sessions"), 1, "the persistent session is kept")
        try mosquittoPublish(daemon, ["-q", "1", "-t", "news/a", "-m", "queued"])
        let cleanStart = try raw(daemon, version: 4, "fresh, clean")
        XCTAssertEqual(
            try cleanStart.connect(clientID: "fresh", clean: true), MQTTConnAck(sessionPresent: false, code: 0))
        XCTAssertEqual(try cleanStart.framesBeforePing(), [])
    }

    /// The session expiry interval of testA5SessionExpiresAfterItsInterval, in seconds.
    private static let expiring: UInt32 = 4

    func testA5SessionExpiresAfterItsInterval() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["exp.t"]))
        let line = try connect(daemon, "line")
        let (first, ack) = try rawConnected(
            daemon, version: 5, clientID: "expiring", properties: [Self.expiry(Self.expiring)])
        XCTAssertNil(ack.properties.first(MQTTProperty.sessionExpiryInterval), "4 s is under mqtt_session_expiry")
        XCTAssertEqual(try first.subscribe([("exp/t", 1)]).codes, [1])
        try first.send(MQTTEncode.disconnect(version: 5))
        XCTAssertEqual(try first.packetsUntilClosed(), [])

        // Within its interval the session is there (4 s: room for the reconnect on a loaded machine).
        let (second, resumed) = try rawConnected(
            daemon, version: 5, clientID: "expiring", clean: false, properties: [Self.expiry(Self.expiring)])
        XCTAssertTrue(resumed.sessionPresent)
        XCTAssertEqual(try line.pub("exp.t", Array("kept".utf8)), .ok("1"))
        XCTAssertEqual(try second.nextPublish().text, "kept")
        try second.send(MQTTEncode.disconnect(version: 5))
        let disconnected = Date()
        XCTAssertEqual(try second.packetsUntilClosed(), [])

        try eventually("the session expires", timeout: 15) {
            counter(try stats(line), "mqtt_sessions_expired") == 1
        }
        let elapsed = Date().timeIntervalSince(disconnected)
        XCTAssertGreaterThanOrEqual(elapsed, Double(Self.expiring) - 0.05, "not before its 4 s")
        XCTAssertLessThan(elapsed, 10, "soon after its 4 s")
        let values = try stats(line)
        XCTAssertEqual(counter(values, "mqtt_sessions"), 0)
        XCTAssertEqual(try listCounts(line)["exp.t"], 0, "its subscription left the number")

        let (third, gone) = try rawConnected(
            daemon, version: 5, clientID: "expiring", clean: false, properties: [Self.expiry(Self.expiring)])
        XCTAssertFalse(gone.sessionPresent)
        XCTAssertEqual(try line.pub("exp.t", Array("lost".utf8)), .ok("0"))
        XCTAssertEqual(try third.framesBeforePing(), [])
    }

    func testTheSessionExpiryIsCappedByMqttSessionExpiry() throws {
        let daemon = try startMQTTDaemon(mqttConfig(["mqtt_session_expiry: 1"]))
        let (_, ack) = try rawConnected(daemon, version: 5, clientID: "greedy", properties: [Self.expiry(3600)])
        XCTAssertEqual(ack.properties.integer(MQTTProperty.sessionExpiryInterval), 1, "CONNACK tells the cap")
    }

    func testAnUnacknowledgedQoS1MessageIsSentAgainWithDupAndItsPacketIdentifier() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["dup.t"]))
        let watcher = try disconnectWatcher(daemon)
        for version: UInt8 in [4, 5] {
            let id = "dup-\(version)"
            let properties = version == 5 ? [Self.expiry(60)] : []
            let (sub, _) = try rawConnected(
                daemon, version: version, clientID: id, clean: false, properties: properties)
            XCTAssertEqual(try sub.subscribe([("dup/t", 1)]).codes, [1])
            let (publisher, _) = try rawConnected(daemon, version: version, clientID: "pub-\(version)")
            let puback = try XCTUnwrap(try publisher.publish("dup/t", Array("m\(version)".utf8), qos: 1, packetID: 7))
            XCTAssertEqual(puback.packetID, 7)
            XCTAssertEqual(puback.code, 0)
            let first = try sub.nextPublish()
            XCTAssertEqual(first.text, "m\(version)")
            XCTAssertEqual(first.qos, 1)
            XCTAssertFalse(first.dup)
            let packetID = try XCTUnwrap(first.packetID)
            sub.close()  // no PUBACK
            try waitForDisconnect(watcher, of: id)
            let (again, resumed) = try rawConnected(
                daemon, version: version, clientID: id, clean: false, properties: properties)
            XCTAssertTrue(resumed.sessionPresent, "v\(version)")
            let redelivered = try again.nextPublish()
            XCTAssertEqual(
                redelivered,
                MQTTPublish(
                    topic: "dup/t", payload: Array("m\(version)".utf8), qos: 1, retain: false, dup: true,
                    packetID: packetID),
                "v\(version): the same message, DUP set, the same packet identifier")
            try again.send(MQTTEncode.ack(MQTTType.puback, packetID: packetID))
            XCTAssertEqual(try again.framesBeforePing(), [], "v\(version): nothing else")
            again.close()
            let (last, _) = try rawConnected(
                daemon, version: version, clientID: id, clean: false, properties: properties)
            XCTAssertEqual(try last.framesBeforePing(), [], "v\(version): acknowledged, not sent again")
        }
    }

    func testASecondConnectionTakesTheSessionOver() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["take.t"]))
        let line = try connect(daemon, "line")
        for version: UInt8 in [4, 5] {
            let id = "taken-\(version)"
            let properties = version == 5 ? [Self.expiry(60)] : []
            let (first, _) = try rawConnected(
                daemon, version: version, clientID: id, clean: false, properties: properties)
            XCTAssertEqual(try first.subscribe([("take/t", 1)]).codes, [1])
            let before = try stats(line)
            let (second, ack) = try rawConnected(
                daemon, version: version, clientID: id, clean: false, properties: properties)
            XCTAssertTrue(ack.sessionPresent, "v\(version): the session goes to the new connection")
            let told = try first.packetsUntilClosed()
            if version == 5 {
                XCTAssertEqual(told.count, 1, "v5: one DISCONNECT: \(told)")
                XCTAssertEqual(try told.first?.disconnect().code, 0x8E, "v5: session taken over")
            } else {
                XCTAssertEqual(told, [], "3.1.1: just closed")
            }
            XCTAssertEqual(try line.pub("take.t", Array("to the new one".utf8)), .ok("1"), "v\(version)")
            XCTAssertEqual(try second.nextPublish().text, "to the new one")
            let expected = (counter(before, "closed_taken_over") ?? 0) + 1
            try eventually("v\(version): closed_taken_over counts it") {
                counter(try stats(line), "closed_taken_over") == expected
            }
            second.close()
        }
    }

    func testTakingOverAConnectedSessionWithoutExpiryResumesIt() throws {
        // 5.0 section 3.1.2.4: Clean Start 0 and Session State for the Client ID: "the Server MUST resume
        // communications with the Client based on state from the existing Session" and set Session Present to 1.
        // The first connection's session has no expiry (0), but it is there when the second CONNECT comes.
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["take.z"]))
        let line = try connect(daemon, "line")
        let (first, _) = try rawConnected(daemon, version: 5, clientID: "zero")
        XCTAssertEqual(try first.subscribe([("take/z", 1)]).codes, [1])
        let (second, ack) = try rawConnected(
            daemon, version: 5, clientID: "zero", clean: false, properties: [Self.expiry(60)])
        XCTAssertEqual(try first.packetsUntilClosed().map { try $0.disconnect().code }, [0x8E])
        if ack.sessionPresent {
            // A session said to be present must serve: its subscription delivers to the new connection.
            XCTAssertEqual(
                try line.pub("take.z", Array("resumed".utf8)), .ok("1"), "session present, subscription gone")
            XCTAssertEqual(try second.framesBeforePing().map { try $0.publish(version: 5).text }, ["resumed"])
            XCTAssertEqual(counter(try stats(line), "mqtt_sessions"), 1)
        } else {
            XCTAssertEqual(try line.pub("take.z", Array("fresh".utf8)), .ok("0"))
        }
    }
}

extension MQTTRawClient {
    /// The PUBLISH packets before the PINGRESP of a PINGREQ sent now.
    func publishes(before type: UInt8, timeout: TimeInterval, sendingPing: Bool) throws -> [MQTTPublish] {
        if sendingPing { try send(MQTTEncode.pingreq) }
        return try frames(before: type, timeout: timeout).map { try $0.publish(version: version) }
    }
}
