import Foundation
import XCTest

/// Topic rules: `#` does not match `$` topics, `$SYS/#` gets the daemon's notifications (section 4.7.2); shared
/// subscriptions `$share/<group>/<filter>` share the messages out, each exactly once, while a plain subscription gets
/// them all (5.0 section 4.8.2).
final class MQTTTopicTests: MQTTTestCase {
    func testHashDoesNotMatchSysTopicsAndSysHashGetsTheNotifications() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["plain.x"]))
        let all = try pahoConnected(daemon, ["version": 5, "client_id": "all"], label: "#")
        XCTAssertEqual(try all.subscribe("#").codes, [0])
        let plus = try mosquittoSub(
            daemon, ["-V", "mqttv311", "-t", "+/client/connected", "-t", "#"], label: "+ and #")
        XCTAssertEqual(plus.granted, [0, 0])
        let sys = try pahoConnected(daemon, ["version": 4, "client_id": "sys"], label: "$SYS/#")
        XCTAssertEqual(try sys.subscribe("$SYS/#", qos: 1).codes, [1])
        // A 5.0 `$SYS/#` subscriber whose session decides each delivery (no-local: not the common case), beside the
        // 5.0 `#` one that takes the common case: the packet made for it is never handed on to `#`.
        let sys5 = try pahoConnected(daemon, ["version": 5, "client_id": "sys5"], label: "$SYS/# no-local")
        XCTAssertEqual(try sys5.subscribe([.init(filter: "$SYS/#", qos: 0, noLocal: true)]).codes, [0])

        let line = try connect(daemon, "line")  // posts $SYS.client.connected
        XCTAssertEqual(try line.pub("plain.x", Array("sentinel".utf8)), .ok("2"), "# twice; not $SYS/#")
        XCTAssertEqual(try all.nextPublish().text, "sentinel", "no $SYS message before it")
        XCTAssertEqual(try plus.next().text, "sentinel", "no $SYS message before it")

        var connected: [String: Any]?
        while connected == nil {
            let publish = try sys.nextPublish()
            XCTAssertTrue(publish.topic.hasPrefix("$SYS/"), publish.topic)
            XCTAssertEqual(publish.qos, 0, "notifications are QoS 0")
            let event = try JSONSerialization.jsonObject(with: Data(publish.payload)) as? [String: Any]
            XCTAssertEqual(
                event?["event"] as? String, publish.topic.dropFirst(5).replacingOccurrences(of: "/", with: "."))
            if publish.topic == "$SYS/client/connected", event?["session"] != nil { connected = event }
        }
        XCTAssertTrue(
            try sys.framesBeforePing().allSatisfy { (try? $0.publish(version: 4).topic.hasPrefix("$SYS/")) == true },
            "the line publication did not reach $SYS/#")
        var sys5Connected = false
        while !sys5Connected {
            let publish = try sys5.nextPublish()
            XCTAssertTrue(publish.topic.hasPrefix("$SYS/"), publish.topic)
            sys5Connected = publish.topic == "$SYS/client/connected"
        }
    }

    func testASharedSubscriptionSharesOutEachMessageOnceAndAPlainOneGetsThemAll() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["jobs.x"]))
        let workers = try (1...2).map { index in
            try pahoConnected(daemon, ["version": 5, "client_id": "worker\(index)"], label: "worker \(index)")
        }
        for worker in workers { XCTAssertEqual(try worker.subscribe("$share/g/jobs/#", qos: 1).codes, [1]) }
        let v311Worker = try mosquittoSub(
            daemon, ["-V", "mqttv311", "-q", "1", "-t", "$share/other/jobs/x"], label: "the other group")
        let watcher = try mosquittoSub(daemon, ["-V", "mqttv5", "-q", "1", "-t", "jobs/#"], label: "plain")

        let jobs = (0..<20).map { String(format: "job-%02d", $0) }
        try mosquittoPublish(
            daemon, ["-V", "mqttv5", "-q", "1", "-t", "jobs/x", "-l"],
            stdin: Array(jobs.joined(separator: "\n").utf8) + [0x0A])
        XCTAssertEqual(try (0..<20).map { _ in try watcher.next().text }, jobs, "the plain subscriber: all, in order")
        XCTAssertEqual(try (0..<20).map { _ in try v311Worker.next().text }, jobs, "a group of one: all")
        var shares: [[String]] = [[], []]
        for (index, worker) in workers.enumerated() {
            // The messages had all been taken when mosquitto_pub ended: the PINGRESP follows them.
            shares[index] = try worker.framesBeforePing().map { try $0.publish(version: 5).text }
        }
        XCTAssertEqual((shares[0] + shares[1]).sorted(), jobs, "each message exactly once to the group")
        XCTAssertFalse(shares[0].isEmpty, "both members get some: \(shares)")
        XCTAssertFalse(shares[1].isEmpty, "both members get some: \(shares)")
        XCTAssertEqual(shares[0], shares[0].sorted(), "in order within a member")
        XCTAssertEqual(shares[1], shares[1].sorted(), "in order within a member")
    }
}
