import Foundation
import XCTest

/// MQTT 5.0 properties end to end: topic aliases (section 3.3.2.3.4), user properties (3.3.2.3.7) and their info
/// pairs for line subscribers, subscription identifiers (3.8.2.1.2, 3.3.4), reason strings only when the client asks
/// for problem information (3.1.2.11.7).
final class MQTTPropertiesTests: MQTTTestCase {
    func testTopicAliasesAreDeliveredUnderTheirTopics() throws {
        let daemon = try startMQTTDaemon(mqttConfig(["mqtt_topic_alias_maximum: 2"]))
        let line = try connect(daemon, "line")
        try subscribe(line, "alias.>")
        let sub = try mosquittoSub(daemon, ["-V", "mqttv5", "-t", "alias/#"])
        let (publisher, ack) = try paho(daemon, ["version": 5, "client_id": "aliaser"])
        XCTAssertEqual(ack.properties.integer(MQTTProperty.topicAliasMaximum), 2)
        let sends: [(String, String, Int)] = [
            ("alias/t", "one", 1), ("", "two", 1), ("alias/u", "three", 2), ("", "four", 2), ("", "five", 1),
            ("alias/v", "six", 1), ("", "seven", 1),
        ]
        let topics = ["alias/t", "alias/t", "alias/u", "alias/u", "alias/t", "alias/v", "alias/v"]
        for (topic, text, alias) in sends {
            let mid = try publisher.publish(topic, Array(text.utf8), qos: 1, properties: ["TopicAlias": alias])
            XCTAssertEqual(try publisher.ack(MQTTType.puback), MQTTAck(packetID: UInt16(mid), code: 0), text)
        }
        for (index, (_, text, _)) in sends.enumerated() {
            let number = topics[index].replacingOccurrences(of: "/", with: ".")
            XCTAssertEqual(try line.nextMessage(), Message(number, text: text, from: "aliaser"))
            XCTAssertEqual(
                try sub.next(),
                MosquittoSub.Received(topic: topics[index], qos: 0, retain: false, payload: Array(text.utf8)))
        }

        // An alias above mqtt_topic_alias_maximum: DISCONNECT 0x94; the message is not delivered.
        try publisher.publish("alias/t", Array("eight".utf8), qos: 1, properties: ["TopicAlias": 3])
        XCTAssertEqual(try publisher.disconnectPacket().code, 0x94)
        try publisher.waitClosed()
        // An empty topic with an alias never set: a protocol error (0x82).
        let (unset, _) = try rawConnected(daemon, version: 5, clientID: "unset")
        try unset.send(
            MQTTEncode.publish(
                version: 5, topic: "", payload: Array("nine".utf8),
                properties: [.init(id: MQTTProperty.topicAlias, value: .two(1))]))
        XCTAssertEqual(try unset.packetsUntilClosed().map { try $0.disconnect().code }, [0x82])
        XCTAssertEqual(try line.pub("alias.t", Array("ten".utf8)), .ok("2"))
        XCTAssertEqual(try line.nextMessage().text, "ten", "nothing of the refused ones came first")
    }

    func testUserPropertiesReachMQTTSubscribersExactlyAndLineSubscribersAsInfoPairs() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["props.t"]))
        let line = try connect(daemon, "line")
        try subscribe(line, "props.t")
        let sub = try pahoConnected(daemon, ["version": 5, "client_id": "props-sub"], label: "subscriber")
        XCTAssertEqual(try sub.subscribe("props/t", qos: 1).codes, [1])
        let publisher = try pahoConnected(daemon, ["version": 5, "client_id": "props-pub"], label: "publisher")
        let sent = [
            ["a", "1"], ["b", "2"], ["a", "3"], ["k", "v w=%"], ["from", "forged"], ["\u{fc}ber", "x"], ["e", ""],
            ["utf", "caf\u{e9}"],
        ]
        try publisher.publish(
            "props/t", Array("with properties".utf8), qos: 1,
            properties: ["UserProperty": sent, "ContentType": "text/plain", "PayloadFormatIndicator": 1])
        let got = try sub.nextPublish()
        XCTAssertEqual(got.text, "with properties")
        XCTAssertEqual(got.properties.userProperties, sent, "every user property, in order, repeats kept")
        XCTAssertEqual(got.properties.string(MQTTProperty.contentType), "text/plain")
        XCTAssertEqual(got.properties.integer(MQTTProperty.payloadFormatIndicator), 1)
        // Line: the pairs whose name is an info key, the first of each name, values percent-encoded; the server's own
        // key `from` and a value that is empty are no info pairs.
        let message = try line.nextMessage()
        XCTAssertEqual(
            message.attributes, ["from": "props-pub", "a": "1", "b": "2", "k": "v%20w%3D%25", "utf": "caf\u{e9}"])

        // A line publication's info pairs reach a 5.0 subscriber as user properties, values percent-decoded.
        try line.send(Array("PUB props.t 4 unit=EUR note=a%20b%3Dc\nline\n".utf8))
        XCTAssertEqual(try line.readReply(), .ok("2"))
        let fromLine = try sub.nextPublish()
        XCTAssertEqual(fromLine.text, "line")
        XCTAssertEqual(fromLine.properties.userProperties, [["unit", "EUR"], ["note", "a b=c"]])
    }

    func testSubscriptionIdentifiersComeWithTheMessagesTheyMatch() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["sid.a", "sid.b"]))
        let client = try pahoConnected(daemon, ["version": 5, "client_id": "ids"])
        XCTAssertEqual(
            try client.subscribe([.init(filter: "sid/#", qos: 1)], properties: ["SubscriptionIdentifier": 7]).codes,
            [1])
        XCTAssertEqual(
            try client.subscribe([.init(filter: "sid/a", qos: 0)], properties: ["SubscriptionIdentifier": 300]).codes,
            [0])
        XCTAssertEqual(try client.subscribe([.init(filter: "sid/+", qos: 0)]).codes, [0], "one without an identifier")
        let line = try connect(daemon, "line")
        XCTAssertEqual(try line.pub("sid.a", Array("a".utf8)), .ok("1"))
        XCTAssertEqual(try line.pub("sid.b", Array("b".utf8)), .ok("1"))
        let publishes = try client.framesBeforePing().map { try $0.publish(version: 5) }
        XCTAssertEqual(publishes.map(\.text), ["a", "b"], "one copy each, overlapping subscriptions or not")
        XCTAssertEqual(publishes.map(\.properties.subscriptionIdentifiers), [[7, 300], [7]])
    }

    func testReasonStringsOnlyWhenTheClientAsksForProblemInformation() throws {
        let daemon = try startMQTTDaemon(mqttConfig(["mqtt_create: never"]))
        let noProblems = MQTTProperty(id: MQTTProperty.requestProblemInformation, value: .byte(0))
        for (asks, properties) in [(true, [MQTTProperty]()), (false, [noProblems])] {
            let (client, _) = try rawConnected(
                daemon, version: 5, clientID: asks ? "asks" : "quiet", properties: properties)
            let subAck = try client.subscribe([("missing/topic", 1)])
            XCTAssertEqual(subAck.codes, [0x83], "an exact filter of a missing number, mqtt_create never")
            let puback = try XCTUnwrap(try client.publish("missing/topic", Array("x".utf8), qos: 1, packetID: 3))
            XCTAssertEqual(puback.packetID, 3)
            XCTAssertEqual(puback.code, 0x83)
            if asks {
                XCTAssertTrue(subAck.properties.reasonString?.contains("missing.topic") ?? false, "\(subAck)")
                XCTAssertTrue(puback.properties.reasonString?.contains("missing.topic") ?? false, "\(puback)")
            } else {
                XCTAssertEqual(subAck.properties, [], "Request Problem Information 0: no reason string")
                XCTAssertEqual(puback.properties, [], "Request Problem Information 0: no reason string")
            }
        }
    }
}
