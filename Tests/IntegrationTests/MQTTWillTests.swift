import Foundation
import XCTest

/// Wills (3.1.1 section 3.1.2.5, 5.0 sections 3.1.2.5 and 3.1.3.2) and keepalive (3.1.2.10): a will is published
/// when the connection ends without a DISCONNECT (or with 5.0's 0x04), with its QoS and retain flag, after its 5.0
/// delay unless the client comes back first; a client silent past one and a half times its keepalive is closed and
/// its will published.
final class MQTTWillTests: MQTTTestCase {
    private func will(_ topic: String, _ text: String, qos: Int = 0, retain: Bool = false, delay: Int? = nil)
        -> [String: Any]
    {
        var will: [String: Any] = [
            "topic": topic, "payload": hexString(Array(text.utf8)), "qos": qos, "retain": retain,
        ]
        if let delay { will["properties"] = ["WillDelayInterval": delay] }
        return will
    }

    /// The messages on numbers below `wills.` that `line` got before the end of `name`'s connection was posted.
    private func willsBeforeDisconnect(_ line: LineClient, of name: String) throws -> [Message] {
        var wills: [Message] = []
        while true {
            let message = try line.nextMessage()
            if message.number == "$SYS.client.disconnected" {
                if json(message)["name"] as? String == name { return wills }
            } else {
                wills.append(message)
            }
        }
    }

    func testAKilledClientsWillReachesLineAndMQTTSubscribers() throws {
        let daemon = try startMQTTDaemon()
        let line = try connect(daemon, "line")
        try subscribe(line, "wills.>")
        let sub = try mosquittoSub(daemon, ["-V", "mqttv5", "-q", "1", "-t", "wills/#"])
        for version in [4, 5] {
            let mortal = try pahoConnected(
                daemon,
                [
                    "version": version, "client_id": "mortal\(version)",
                    "will": will("wills/m\(version)", "gone", qos: 1),
                ])
            mortal.kill()
            XCTAssertEqual(
                try line.nextMessage(), Message("wills.m\(version)", text: "gone", from: "mortal\(version)"),
                "v\(version)")
            XCTAssertEqual(
                try sub.next(),
                MosquittoSub.Received(topic: "wills/m\(version)", qos: 1, retain: false, payload: Array("gone".utf8)))
        }
        XCTAssertEqual(counter(try stats(line), "mqtt_wills"), 2)
    }

    func testARetainedWillSetsTheRetainedValue() throws {
        let daemon = try startMQTTDaemon()
        let line = try connect(daemon, "line")
        try subscribe(line, "wills.>")
        let mortal = try pahoConnected(
            daemon, ["version": 5, "client_id": "status", "will": will("wills/status", "offline", retain: true)])
        mortal.kill()
        XCTAssertEqual(try line.nextMessage().text, "offline")
        let got = try subctl(daemon, "get", ["wills.status"])
        XCTAssertEqual(got.status, 0, "\(got)")
        XCTAssertEqual(got.output, "offline\n")
        let later = try mosquittoSub(daemon, ["-V", "mqttv311", "-t", "wills/status"])
        XCTAssertEqual(
            try later.next(),
            MosquittoSub.Received(topic: "wills/status", qos: 0, retain: true, payload: Array("offline".utf8)))
    }

    func testADisconnectDiscardsTheWillButNotDisconnectWithWill() throws {
        let daemon = try startMQTTDaemon()
        let line = try connect(daemon, "line")
        try subscribe(line, "wills.>", "$SYS.client.disconnected")
        let polite311 = try pahoConnected(
            daemon, ["version": 4, "client_id": "polite4", "will": will("wills/p4", "no")])
        try polite311.disconnect()
        XCTAssertEqual(try willsBeforeDisconnect(line, of: "polite4"), [], "3.1.1 DISCONNECT")
        let polite5 = try pahoConnected(daemon, ["version": 5, "client_id": "polite5", "will": will("wills/p5", "no")])
        try polite5.disconnect(reason: 0)
        XCTAssertEqual(try willsBeforeDisconnect(line, of: "polite5"), [], "5.0 DISCONNECT 0x00")
        let leaving = try pahoConnected(daemon, ["version": 5, "client_id": "leaving", "will": will("wills/l", "yes")])
        try leaving.disconnect(reason: 0x04)
        XCTAssertEqual(
            try willsBeforeDisconnect(line, of: "leaving"), [Message("wills.l", text: "yes", from: "leaving")],
            "5.0 DISCONNECT 0x04: disconnect with will message")
        XCTAssertEqual(counter(try stats(line), "mqtt_wills"), 1)
    }

    func testAWillDelayIsWaitedAndCancelledByAReconnect() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["wills.returning"]))
        let line = try connect(daemon, "line")
        try subscribe(line, "wills.>")
        let session: [String: Any] = ["SessionExpiryInterval": 30]
        // The returning client's delay is long enough for its reconnect to land within it even on a loaded machine;
        // the late one's is short, so the test need not wait long for it.
        let returningDelay = 5.0
        let late = try pahoConnected(
            daemon,
            ["version": 5, "client_id": "late", "properties": session, "will": will("wills/late", "late", delay: 1)])
        let returning = try pahoConnected(
            daemon,
            [
                "version": 5, "client_id": "returning", "properties": session,
                "will": will("wills/returning", "too early", delay: Int(returningDelay)),
            ])
        returning.kill()
        let returningKilled = Date()
        let (back, ack) = try rawConnected(
            daemon, version: 5, clientID: "returning", clean: false,
            properties: [.init(id: MQTTProperty.sessionExpiryInterval, value: .four(30))])
        XCTAssertTrue(ack.sessionPresent)
        XCTAssertLessThan(
            Date().timeIntervalSince(returningKilled), returningDelay, "the reconnect came within the will delay")

        late.kill()
        let killed = Date()
        XCTAssertEqual(try line.nextMessage(), Message("wills.late", text: "late", from: "late"))
        let elapsed = Date().timeIntervalSince(killed)
        XCTAssertGreaterThanOrEqual(elapsed, 0.95, "not before its 1 s delay")
        XCTAssertLessThan(elapsed, 6, "soon after its 1 s delay (its session lasts 30 s)")
        // The returning client's will would be due by now; a publication after it comes first.
        let due = returningDelay + 1
        usleep(UInt32(max(0, due - Date().timeIntervalSince(returningKilled)) * 1_000_000))
        XCTAssertEqual(try line.pub("wills.returning", Array("sentinel".utf8)), .ok("1"))
        XCTAssertEqual(try line.nextMessage().text, "sentinel", "the reconnect cancelled the will")
        XCTAssertEqual(try back.framesBeforePing(), [])
        XCTAssertEqual(counter(try stats(line), "mqtt_wills"), 1)
    }

    func testASilentClientIsClosedAfterOneAndAHalfKeepalivesAndItsWillPublished() throws {
        let daemon = try startMQTTDaemon(mqttConfig(["mqtt_keepalive_max: 1"]))
        let line = try connect(daemon, "line")
        try subscribe(line, "wills.>", "$SYS.client.disconnected")
        let before = try stats(line)
        // CONNECT, then nothing: 3.1.1 and 5.0 with a keepalive of 1 s, 5.0 with none (lowered to
        // mqtt_keepalive_max, which CONNACK's Server Keep Alive tells).
        var clients: [(MQTTRawClient, String, Date)] = []
        for (version, keepAlive) in [(UInt8(4), UInt16(1)), (5, 1), (5, 0)] {
            let id = "silent\(version)-\(keepAlive)"
            let will = MQTTEncode.Will(topic: "wills/\(id)", payload: Array("timeout".utf8))
            let sent = Date()  // the server's last input from the client is its CONNECT, read after this
            let (client, ack) = try rawConnected(
                daemon, version: version, clientID: id, keepAlive: keepAlive, will: will)
            if version == 5 {
                XCTAssertEqual(ack.properties.integer(MQTTProperty.serverKeepAlive), keepAlive == 0 ? 1 : nil, id)
            }
            clients.append((client, id, sent))
        }
        for (client, id, sent) in clients {
            let told = try client.packetsUntilClosed(timeout: 10)
            let elapsed = Date().timeIntervalSince(sent)
            XCTAssertGreaterThanOrEqual(elapsed, 1.45, "\(id): not before 1.5 keepalives")
            // Slack for a loaded machine; a client whose keepalive is not watched is not closed at all.
            XCTAssertLessThan(elapsed, 6.0, "\(id): soon after 1.5 keepalives")
            if client.version == 5 {
                XCTAssertEqual(try told.map { try $0.disconnect().code }, [0x8D], "\(id): keep alive timeout")
            } else {
                XCTAssertEqual(told, [], "\(id): closed")
            }
        }
        var wills: [String] = []
        var reasons: [String: String] = [:]
        while reasons.count < clients.count {
            let message = try line.nextMessage()
            if message.number == "$SYS.client.disconnected" {
                let event = json(message)
                if let name = event["name"] as? String { reasons[name] = event["reason"] as? String }
            } else {
                XCTAssertEqual(message.text, "timeout")
                wills.append(message.number)
            }
        }
        XCTAssertEqual(Set(wills), Set(clients.map { "wills.\($0.1)" }))
        XCTAssertEqual(Set(reasons.values), ["mqtt_keepalive"])
        assertCounter("closed_mqtt_keepalive", grewBy: 3, from: before, to: try stats(line))
        assertCounter("mqtt_wills", grewBy: 3, from: before, to: try stats(line))
    }
}
