import Foundation
import XCTest

/// CONNECT and CONNACK (3.1.1 section 3.1-3.2, 5.0 section 3.1-3.2): what is accepted, every refusal's return or
/// reason code, each refusal followed by the close of the connection (nothing after the CONNACK).
final class MQTTConnectTests: MQTTTestCase {
    /// Sends `connect` on a new raw connection and returns its CONNACK, asserting that the server closes the
    /// connection right after it when `closes`.
    private func connAck(
        _ daemon: Daemon, version: UInt8, _ connect: [UInt8], closes: Bool, file: StaticString = #filePath,
        line: UInt = #line
    ) throws -> MQTTConnAck {
        let client = try raw(daemon, version: version)
        try client.send(connect)
        let ack = try client.connAck()
        if closes {
            XCTAssertEqual(
                try client.packetsUntilClosed(), [], "nothing after a refusing CONNACK", file: file, line: line)
        } else {
            XCTAssertEqual(try client.framesBeforePing(), [], "the accepted connection serves", file: file, line: line)
        }
        return ack
    }

    func testAnAcceptedConnectAndWhatTheConnAckOfEachVersionSays() throws {
        let daemon = try startMQTTDaemon()
        let v311 = try raw(daemon, version: 4)
        try v311.send(MQTTEncode.connect(version: 4, clientID: "c311"))
        XCTAssertEqual(try v311.nextFrame(), MQTTFrame(type: MQTTType.connack, flags: 0, body: [0, 0]))
        XCTAssertEqual(try v311.framesBeforePing(), [])

        let v5 = try raw(daemon, version: 5)
        let ack = try v5.connect(clientID: "c5")
        XCTAssertEqual(ack.code, 0)
        XCTAssertFalse(ack.sessionPresent)
        // subd's limits (config/subd.yaml): mqtt_receive_maximum 1024, mqtt_topic_alias_maximum 64, and the largest
        // packet max_payload + max_line (1 MiB + 64 KiB); no identifier assigned, none asked for.
        XCTAssertEqual(ack.properties.integer(MQTTProperty.receiveMaximum), 1024)
        XCTAssertEqual(ack.properties.integer(MQTTProperty.topicAliasMaximum), 64)
        XCTAssertEqual(ack.properties.integer(MQTTProperty.maximumPacketSize), 1_048_576 + 65_536)
        XCTAssertNil(ack.properties.first(MQTTProperty.assignedClientIdentifier))
        XCTAssertNil(ack.properties.first(MQTTProperty.reasonString))
        XCTAssertEqual(try v5.framesBeforePing(), [])

        let line = try connect(daemon, "line")
        let values = try stats(line)
        XCTAssertEqual(counter(values, "mqtt_connects"), 2)
        XCTAssertEqual(counter(values, "mqtt_sessions"), 2)
        XCTAssertEqual(counter(values, "mqtt_refused"), 0)
    }

    func testUsersNeedTheirNameAndPasswordInBothVersions() throws {
        let config = mqttConfig([
            "users:", "  - name: alice", "    secret_hash: \"\(try hashSecret("alice-pw"))\"", "    publish: [\">\"]",
            "    subscribe: [\">\"]",
        ])
        let daemon = try startMQTTDaemon(config)
        let good = Array("alice-pw".utf8)
        let bad = Array("wrong".utf8)
        for version: UInt8 in [4, 5] {
            let v5 = version == 5
            let accepted = try connAck(
                daemon, version: version,
                MQTTEncode.connect(version: version, clientID: "a\(version)", username: "alice", password: good),
                closes: false)
            XCTAssertEqual(accepted.code, 0, "v\(version): alice's name and password")
            let wrong = try connAck(
                daemon, version: version,
                MQTTEncode.connect(version: version, clientID: "b\(version)", username: "alice", password: bad),
                closes: true)
            XCTAssertEqual(wrong.code, v5 ? 0x86 : 4, "v\(version): a wrong password")
            let unknown = try connAck(
                daemon, version: version,
                MQTTEncode.connect(version: version, clientID: "c\(version)", username: "bob", password: good),
                closes: true)
            XCTAssertEqual(unknown.code, v5 ? 0x86 : 4, "v\(version): an unknown user")
            let none = try connAck(
                daemon, version: version, MQTTEncode.connect(version: version, clientID: "d\(version)"), closes: true)
            XCTAssertEqual(none.code, v5 ? 0x87 : 5, "v\(version): no credentials")
            if v5 {
                XCTAssertNotNil(wrong.properties.reasonString, "a 5.0 refusal says why")
                XCTAssertNotNil(none.properties.reasonString, "a 5.0 refusal says why")
            }
        }
        let line = try connect(daemon, "line")
        XCTAssertEqual(
            try line.command("HELLO name=alice token=alice-pw").description.hasPrefix("+OK subd"), true)
        XCTAssertEqual(counter(try stats(line), "mqtt_refused"), 6)

        // The real clients: mosquitto_sub refused, mosquitto_pub with alice's credentials accepted.
        for version in ["mqttv311", "mqttv5"] {
            let (status, output) = try mosquittoPub(
                port: try daemon.mqttPort(), ["-V", version, "-u", "alice", "-P", "wrong", "-t", "x", "-m", "1"])
            XCTAssertNotEqual(status, 0, "\(version): \(output)")
            XCTAssertTrue(output.lowercased().contains("bad user name or password"), "\(version): \(output)")
            try mosquittoPublish(daemon, ["-V", version, "-u", "alice", "-P", "alice-pw", "-t", "x", "-m", "1"])
        }
    }

    func testTheAuthTokenIsThePassword() throws {
        let daemon = try startMQTTDaemon(mqttConfig(["auth_token: \"sesame\""]))
        let token = Array("sesame".utf8)
        let v311 = try connAck(
            daemon, version: 4, MQTTEncode.connect(version: 4, clientID: "t4", username: "any", password: token),
            closes: false)
        XCTAssertEqual(v311.code, 0)
        // 5.0 lets a password come without a user name.
        let v5 = try connAck(
            daemon, version: 5, MQTTEncode.connect(version: 5, clientID: "t5", password: token), closes: false)
        XCTAssertEqual(v5.code, 0)
        for version: UInt8 in [4, 5] {
            let wrong = try connAck(
                daemon, version: version,
                MQTTEncode.connect(version: version, clientID: "w", username: "any", password: Array("nope".utf8)),
                closes: true)
            XCTAssertEqual(wrong.code, version == 5 ? 0x86 : 4, "v\(version): not the token")
            let none = try connAck(
                daemon, version: version, MQTTEncode.connect(version: version, clientID: "n"), closes: true)
            XCTAssertEqual(none.code, version == 5 ? 0x86 : 4, "v\(version): no password")
        }
        try mosquittoPublish(daemon, ["-V", "mqttv5", "-u", "x", "-P", "sesame", "-t", "t", "-m", "1"])
    }

    func testAnEmptyClientIdentifier() throws {
        let daemon = try startMQTTDaemon(mqttConfig(numbers: ["E"]))
        // 3.1.1 with a clean session: accepted, and the connection works.
        let clean = try raw(daemon, version: 4, "empty clean")
        XCTAssertEqual(try clean.connect(clientID: ""), MQTTConnAck(sessionPresent: false, code: 0))
        XCTAssertEqual(try clean.subscribe([("E", 0)]).codes, [0])
        let line = try connect(daemon, "line")
        XCTAssertEqual(try line.pub("E", Array("to the anonymous".utf8)), .ok("1"))
        XCTAssertEqual(try clean.nextPublish().text, "to the anonymous")

        // 3.1.1 without a clean session: identifier rejected (2), and the connection closes.
        let ack = try connAck(
            daemon, version: 4, MQTTEncode.connect(version: 4, clientID: "", clean: false), closes: true)
        XCTAssertEqual(ack, MQTTConnAck(sessionPresent: false, code: 2))

        // 5.0: the server assigns one (Assigned Client Identifier), a different one to each client.
        var assigned: [String] = []
        for clean in [true, false] {
            let client = try raw(daemon, version: 5, "empty 5.0")
            let ack = try client.connect(
                clientID: "", clean: clean,
                properties: [.init(id: MQTTProperty.sessionExpiryInterval, value: .four(30))])
            XCTAssertEqual(ack.code, 0)
            XCTAssertFalse(ack.sessionPresent)
            let id = try XCTUnwrap(ack.properties.string(MQTTProperty.assignedClientIdentifier))
            XCTAssertFalse(id.isEmpty)
            assigned.append(id)
        }
        XCTAssertNotEqual(assigned[0], assigned[1])
    }

    func testProtocolLevelsNotSpokenGetTheirConnAck() throws {
        let daemon = try startMQTTDaemon()
        // MQTT 3.1 ("MQIsdp", level 3): 3.1.1's return code 1, unacceptable protocol version.
        let mqisdp = try raw(daemon, version: 4, "MQIsdp")
        try mqisdp.send(MQTTEncode.connect(version: 3, clientID: "old", protocolName: "MQIsdp"))
        XCTAssertEqual(try mqisdp.nextFrame(), MQTTFrame(type: MQTTType.connack, flags: 0, body: [0, 1]))
        XCTAssertEqual(try mqisdp.packetsUntilClosed(), [])
        // A level above 5: 5.0's CONNACK with 0x84, unsupported protocol version.
        let level6 = try raw(daemon, version: 5, "level 6")
        try level6.send(MQTTEncode.connect(version: 6, clientID: "new"))
        let ack = try level6.connAck()
        XCTAssertEqual(ack.code, 0x84)
        XCTAssertEqual(try level6.packetsUntilClosed(), [])
        let line = try connect(daemon, "line")
        assertOpen(line, "after the refused versions")
    }

    func testAnAuthenticationMethodIsRefusedWith0x8C() throws {
        let daemon = try startMQTTDaemon()
        let client = try raw(daemon, version: 5)
        try client.send(
            MQTTEncode.connect(
                version: 5, clientID: "scram",
                properties: [.init(id: MQTTProperty.authenticationMethod, value: .string("SCRAM-SHA-1"))]))
        let ack = try client.connAck()
        XCTAssertEqual(ack.code, 0x8C)
        XCTAssertFalse(ack.sessionPresent)
        XCTAssertEqual(try client.packetsUntilClosed(), [])
        let line = try connect(daemon, "line")
        XCTAssertEqual(counter(try stats(line), "mqtt_sessions"), 0)
    }
}
