import Foundation
import XCTest

/// MQTT and the line protocol on the same numbers (topic `a/b` is number `a.b`): subctl's publications reach
/// mosquitto_sub of both versions and are counted as receivers; mosquitto_pub's and paho's reach line subscribers,
/// every byte value intact, both ways.
final class MQTTBridgeTests: MQTTTestCase {
    /// Every byte value, in order.
    private static let allBytes: [UInt8] = Array(0...255)

    func testSubctlPublishReachesMosquittoSubOfBothVersionsAndCountsThem() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["SCIENCE.physics"]))
        let v311 = try mosquittoSub(daemon, ["-V", "mqttv311", "-t", "SCIENCE/#"], label: "sub 3.1.1")
        let v5 = try mosquittoSub(daemon, ["-V", "mqttv5", "-t", "SCIENCE/#"], label: "sub 5.0")
        XCTAssertEqual(v311.granted, [0])
        XCTAssertEqual(v5.granted, [0])
        let line = try connect(daemon, "line")
        try subscribe(line, "SCIENCE.>")

        let result = try subctl(daemon, "publish", ["SCIENCE.physics", "V1.0"])
        XCTAssertEqual(result.status, 0, "\(result)")
        XCTAssertEqual(result.lines, ["published to 3 receivers"], "two MQTT subscribers and one line subscriber")
        let expected = MosquittoSub.Received(
            topic: "SCIENCE/physics", qos: 0, retain: false, payload: Array("V1.0".utf8))
        XCTAssertEqual(try v311.next(), expected)
        XCTAssertEqual(try v5.next(), expected)
        XCTAssertEqual(try line.nextMessage().payload, Array("V1.0".utf8))

        // Once the MQTT subscribers are gone, only the line subscriber counts.
        v311.end()
        v5.end()
        try eventually("the mosquitto_subs' sessions end") {
            counter(try stats(line), "mqtt_sessions") == 0
        }
        XCTAssertEqual(try subctl(daemon, "publish", ["SCIENCE.physics", "V1.1"]).lines, ["published to 1 receiver"])
    }

    func testMosquittoPubReachesALineSubscriberByteExactInBothVersions() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["SCIENCE.physics"]))
        let line = try connect(daemon, "line")
        try subscribe(line, "SCIENCE.>")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mqtt-bytes-\(UUID().uuidString)")
        try Data(Self.allBytes).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        for (version, qos) in [("mqttv311", "0"), ("mqttv311", "1"), ("mqttv5", "0"), ("mqttv5", "1")] {
            try mosquittoPublish(
                daemon, ["-V", version, "-q", qos, "-i", "pub-\(version)", "-t", "SCIENCE/physics", "-f", file.path])
            let message = try line.nextMessage()
            XCTAssertEqual(message.number, "SCIENCE.physics", "\(version) QoS \(qos)")
            XCTAssertEqual(message.payload, Self.allBytes, "\(version) QoS \(qos): every byte value")
            XCTAssertEqual(message.attributes, ["from": "pub-\(version)"], "\(version): from= is the client id")
        }
        try mosquittoPublish(daemon, ["-V", "mqttv5", "-t", "SCIENCE/physics", "-n"])
        XCTAssertEqual(try line.nextMessage().payload, [], "an empty payload")
    }

    func testLinePublicationsReachMosquittoSubByteExactAndPahoReachesLineSubscribers() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["SCIENCE.physics", "SCIENCE.chemistry"]))
        let v311 = try mosquittoSub(daemon, ["-V", "mqttv311", "-q", "1", "-t", "SCIENCE/physics"], label: "3.1.1")
        let v5 = try mosquittoSub(daemon, ["-V", "mqttv5", "-q", "1", "-t", "SCIENCE/physics"], label: "5.0")
        XCTAssertEqual(v311.granted, [1])
        XCTAssertEqual(v5.granted, [1])
        let line = try connect(daemon, "line")
        for payload in [Self.allBytes, [], Array(Self.allBytes.reversed())] {
            XCTAssertEqual(try line.pub("SCIENCE.physics", payload), .ok("2"))
            // A line publication is QoS 0 to MQTT subscribers (the minimum of 0 and the subscription's 1).
            let expected = MosquittoSub.Received(topic: "SCIENCE/physics", qos: 0, retain: false, payload: payload)
            XCTAssertEqual(try v311.next(), expected)
            XCTAssertEqual(try v5.next(), expected)
        }

        try subscribe(line, "SCIENCE.chemistry")
        let paho = try pahoConnected(daemon, ["version": 5, "client_id": "paho-pub"])
        let mid = try paho.publish("SCIENCE/chemistry", Self.allBytes, qos: 1)
        XCTAssertEqual(try paho.ack(MQTTType.puback), MQTTAck(packetID: UInt16(mid), code: 0))
        let message = try line.nextMessage()
        XCTAssertEqual(
            message, Message(number: "SCIENCE.chemistry", payload: Self.allBytes, attributes: ["from": "paho-pub"]))
    }
}
