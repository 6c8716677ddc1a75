import Foundation
import XCTest

/// Retained messages are retained numbers (docs/PROTOCOL.md, MQTT, Publishing and Subscribing): a RETAIN
/// publication creates one, a new subscriber gets its value with RETAIN set, subctl sees and changes it, an empty
/// value is "no retained message" to MQTT; 5.0's retain handling, retain-as-published and no-local.
final class MQTTRetainedTests: MQTTTestCase {
    private func received(_ topic: String, _ text: String, qos: Int = 0, retain: Bool) -> MosquittoSub.Received {
        MosquittoSub.Received(topic: topic, qos: qos, retain: retain, payload: Array(text.utf8))
    }

    func testARetainedPublicationIsTheValueNewSubscribersGetAndSubctlSees() throws {
        let daemon = try startMQTTDaemon()
        try mosquittoPublish(daemon, ["-V", "mqttv311", "-q", "1", "-r", "-t", "news/today", "-m", "headline"])
        let line = try connect(daemon, "line")
        XCTAssertEqual(try line.command("LIST news.> kind"), .list(["news.today 0 retained 1"]))
        let got = try subctl(daemon, "get", ["news.today"])
        XCTAssertEqual(got.output, "headline\n", "\(got)")
        for version in ["mqttv311", "mqttv5"] {
            let sub = try mosquittoSub(daemon, ["-V", version, "-q", "1", "-t", "news/today"], label: version)
            XCTAssertEqual(try sub.next(), received("news/today", "headline", qos: 1, retain: true), version)
            sub.end()
        }
        try eventually("the ended subscribers' sessions are gone") {
            counter(try stats(line), "mqtt_sessions") == 0
        }

        // subctl publishes the next value: a live subscriber gets it as a live message, a new one as retained.
        let live = try mosquittoSub(daemon, ["-V", "mqttv5", "-t", "news/today"], label: "live")
        XCTAssertEqual(try live.next(), received("news/today", "headline", retain: true))
        XCTAssertEqual(try subctl(daemon, "publish", ["news.today", "update"]).lines, ["published to 1 receiver"])
        XCTAssertEqual(try live.next(), received("news/today", "update", retain: false))
        let later = try mosquittoSub(daemon, ["-V", "mqttv311", "-t", "news/today"], label: "later")
        XCTAssertEqual(try later.next(), received("news/today", "update", retain: true), "a line value, QoS 0")

        // An empty retained payload: delivered to the subscribers there, and no retained message for new ones.
        try mosquittoPublish(daemon, ["-V", "mqttv5", "-r", "-n", "-t", "news/today"])
        XCTAssertEqual(try live.next(), received("news/today", "", retain: false))
        let cleared = try mosquittoSub(daemon, ["-V", "mqttv5", "-t", "news/today"], label: "cleared")
        XCTAssertEqual(try subctl(daemon, "publish", ["news.today", "fresh"]).lines, ["published to 3 receivers"])
        XCTAssertEqual(try cleared.next(), received("news/today", "fresh", retain: false), "nothing before it")
    }

    func testRetainHandlingAndRetainAsPublished() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["keep.plain"]))
        try mosquittoPublish(daemon, ["-V", "mqttv5", "-r", "-t", "keep/v", "-m", "v1"])
        let client = try pahoConnected(daemon, ["version": 5, "client_id": "handling"])
        typealias Filter = PahoClient.Filter
        let cases: [(Filter, [String], String)] = [
            (Filter(filter: "keep/v", retainHandling: 0), ["v1"], "retain handling 0: sent"),
            (Filter(filter: "keep/v", retainHandling: 0), ["v1"], "retain handling 0 again: sent again"),
            (Filter(filter: "keep/v", retainHandling: 1), [], "retain handling 1, subscription there: not sent"),
            (Filter(filter: "keep/#", retainHandling: 1), ["v1"], "retain handling 1, new subscription: sent"),
            (Filter(filter: "keep/+", retainHandling: 2), [], "retain handling 2: never sent"),
        ]
        for (filter, expected, what) in cases {
            XCTAssertEqual(try client.subscribe([filter]).codes, [0], what)
            let publishes = try client.framesBeforePing().map { try $0.publish(version: 5) }
            XCTAssertEqual(publishes.map(\.text), expected, what)
            XCTAssertEqual(publishes.map(\.retain), expected.map { _ in true }, what)
        }

        let asPublished = try pahoConnected(daemon, ["version": 5, "client_id": "rap"], label: "rap")
        let plain = try pahoConnected(daemon, ["version": 5, "client_id": "norap"], label: "no rap")
        XCTAssertEqual(
            try asPublished.subscribe([Filter(filter: "keep/#", retainAsPublished: true, retainHandling: 2)]).codes, [0]
        )
        XCTAssertEqual(try plain.subscribe([Filter(filter: "keep/#", retainHandling: 2)]).codes, [0])
        let line = try connect(daemon, "line")
        try mosquittoPublish(daemon, ["-V", "mqttv5", "-r", "-t", "keep/v", "-m", "v2"])
        try mosquittoPublish(daemon, ["-V", "mqttv5", "-t", "keep/v", "-m", "v3"])
        try mosquittoPublish(daemon, ["-V", "mqttv5", "-q", "1", "-t", "keep/v", "-m", "v3q1"])
        XCTAssertEqual(try line.pub("keep.v", Array("v4".utf8)), .ok("3"))
        try mosquittoPublish(daemon, ["-V", "mqttv5", "-r", "-t", "keep/plain", "-m", "p1"])
        // RETAIN as published (5.0 section 3.8.3.1: "keep the RETAIN flag they were published with"), at QoS 0 and 1
        // alike; a line publication, which has no RETAIN, counts as retained when its number is; a plain number keeps
        // no value, but the RETAIN of a publication to it is as published too.
        let expected: [(String, Bool)] = [("v2", true), ("v3", false), ("v3q1", false), ("v4", true), ("p1", true)]
        for (text, retain) in expected {
            let got = try asPublished.nextPublish()
            XCTAssertEqual([got.text], [text])
            XCTAssertEqual(got.retain, retain, "retain as published: \(text)")
            let other = try plain.nextPublish()
            XCTAssertEqual([other.text], [text])
            XCTAssertFalse(other.retain, "without retain as published: \(text)")
        }
        XCTAssertEqual(try subctl(daemon, "get", ["keep.v"]).output, "v4\n")
    }

    func testNoLocalKeepsAClientsOwnPublicationsFromIt() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["chat.room"]))
        let quiet = try pahoConnected(daemon, ["version": 5, "client_id": "quiet"], label: "no local")
        let loud = try pahoConnected(daemon, ["version": 5, "client_id": "loud"], label: "local")
        XCTAssertEqual(try quiet.subscribe([.init(filter: "chat/#", qos: 1, noLocal: true)]).codes, [1])
        XCTAssertEqual(try loud.subscribe([.init(filter: "chat/#", qos: 1)]).codes, [1])

        let mine = try quiet.publish("chat/room", Array("from quiet".utf8), qos: 1)
        // The PUBACK comes after any delivery of the publication to its own publisher: none.
        XCTAssertEqual(try quiet.frames(before: MQTTType.puback), [], "no-local: not to itself")
        XCTAssertEqual(try loud.nextPublish().text, "from quiet")
        _ = mine
        let theirs = try loud.publish("chat/room", Array("from loud".utf8), qos: 1)
        XCTAssertEqual(try loud.frames(before: MQTTType.puback).map { try $0.publish(version: 5).text }, ["from loud"])
        XCTAssertEqual(try quiet.nextPublish().text, "from loud", "another client's publication")
        _ = theirs
    }
}
