import Foundation
import XCTest

/// The bound of an offline session's queue (config/subd.yaml, mqtt_session_expiry: "its QoS 1 and 2 messages queue
/// meanwhile, up to max_pending"): past it messages are dropped, counted in STATS `mqtt_queue_dropped`, told once on
/// `$SYS.mqtt.queue_full`; the client gets the messages that fit, in order, when it comes back.
final class MQTTQueueTests: MQTTTestCase {
    func testAnOfflineSessionsQueueDropsPastMaxPendingAndTellsOnce() throws {
        // max_pending must be at least max_payload + 512.
        var config = mqttConfig(numbers: ["big.q"], maxPending: 65_536)
        config.maxPayload = 16_384
        let daemon = try startMQTTDaemon(config)
        let watcher = try connect(daemon, "$SYS watcher")
        try subscribe(watcher, "$SYS.mqtt.queue_full", "$SYS.client.disconnected")
        let away = try mosquittoSub(daemon, ["-V", "mqttv311", "-c", "-i", "slow", "-q", "1", "-t", "big/q", "-E"])
        XCTAssertEqual(away.child.waitForExit(timeout: 10), 0)
        try waitForDisconnect(watcher, of: "slow")

        // 30 messages of 4 KiB, QoS 1, from a 5.0 publisher: each PUBACK says whether the message reached anybody
        // (0x00: queued for the session) or nobody (0x10: dropped).
        let count = 30
        let payloads = (0..<count).map { index in
            Array(String(format: "%03d", index).utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: 4_093)
        }
        let (publisher, _) = try rawConnected(daemon, version: 5, clientID: "flood")
        var codes: [UInt8] = []
        for (index, payload) in payloads.enumerated() {
            let ack = try XCTUnwrap(try publisher.publish("big/q", payload, qos: 1, packetID: UInt16(index + 1)))
            XCTAssertEqual(ack.packetID, UInt16(index + 1))
            codes.append(ack.code)
        }
        let kept = codes.prefix { $0 == 0x00 }.count
        let dropped = count - kept
        XCTAssertEqual(codes, Array(repeating: 0x00, count: kept) + Array(repeating: 0x10, count: dropped))
        XCTAssertGreaterThan(kept, 5, "64 KiB holds several 4 KiB messages")
        XCTAssertLessThan(kept, 16, "64 KiB does not hold 16 4 KiB messages")
        XCTAssertEqual(counter(try stats(watcher), "mqtt_queue_dropped"), dropped)

        let events = try watcher.pushesBeforePing().compactMap(\.message).filter {
            $0.number == "$SYS.mqtt.queue_full"
        }
        XCTAssertEqual(events.count, 1, "told once: \(events)")
        if let event = events.first.map({ json($0) }) {
            XCTAssertEqual(event["event"] as? String, "mqtt.queue_full")
            XCTAssertEqual(event["client_id"] as? String, "slow")
            XCTAssertEqual(event["connected"] as? Bool, false)
            XCTAssertEqual(event["queued"] as? Int, kept)
            XCTAssertEqual(event["max_pending"] as? Int, 65_536)
        }

        let back = try raw(daemon, version: 4, "slow again")
        XCTAssertEqual(try back.connect(clientID: "slow", clean: false), MQTTConnAck(sessionPresent: true, code: 0))
        var received: [MQTTPublish] = []
        while received.count < kept { received.append(try back.nextPublish()) }
        XCTAssertEqual(received.map(\.payload), Array(payloads.prefix(kept)), "the messages that fit, in order")
        XCTAssertEqual(Set(received.map(\.qos)), [1])
        for publish in received { try back.send(MQTTEncode.ack(MQTTType.puback, packetID: publish.packetID ?? 0)) }
        XCTAssertEqual(try back.framesBeforePing(), [], "nothing else")
        XCTAssertEqual(counter(try stats(watcher), "mqtt_queue_dropped"), dropped)
    }
}
