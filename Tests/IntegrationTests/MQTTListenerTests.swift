import Foundation
import XCTest

/// The other ways in: `mqtts://` (TLS with a self-signed certificate made by openssl, mosquitto's clients trusting
/// it with --cafile, a client certificate naming its user as on `tls://`) and MQTT over WebSocket on `ws://` and
/// `wss://` listeners (paho asking for the subprotocol `mqtt`), each exchanging messages with a line client both
/// ways.
final class MQTTListenerTests: MQTTTestCase {
    private var files: TLSFiles?

    override func tearDown() {
        super.tearDown()
        files?.remove()
    }

    /// A self-signed certificate for 127.0.0.1 (its subjectAltName, which mosquitto's clients check).
    private func certificate() throws -> TLSFiles {
        let files = try TLSFiles()
        self.files = files
        let child = try ChildProcess(
            executable: try TLSFiles.openssl(),
            arguments: [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-days", "1",
                "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", files.path("server.key"), "-out",
                files.path("server.crt"),
            ],
            label: "openssl req")
        guard child.waitForExit(timeout: 30) == 0 else {
            throw HarnessError.process("openssl req failed: \(child.stderr.text)")
        }
        return files
    }

    func testMQTTOverTLSWithMosquittoClients() throws {
        let files = try certificate()
        let config = mqttConfig(
            numbers: ["tls.x", "tls.y"],
            ["tls_cert: \"\(files.path("server.crt"))\"", "tls_key: \"\(files.path("server.key"))\""])
        let daemon = try startMQTTDaemon(config, extraListeners: ["mqtts://127.0.0.1:0"])
        let port = try daemon.mqttsPort()
        let tls = ["-h", "127.0.0.1", "--cafile", files.path("server.crt")]
        let line = try connect(daemon, "line")
        try subscribe(line, "tls.y")
        for version in ["mqttv311", "mqttv5"] {
            let sub = try mosquittoSub(
                daemon, tls + ["-V", version, "-q", "1", "-t", "tls/x"], port: port, label: version)
            XCTAssertEqual(sub.granted, [1])
            XCTAssertEqual(try line.pub("tls.x", Array("over TLS \(version)".utf8)), .ok("1"))
            XCTAssertEqual(
                try sub.next(),
                MosquittoSub.Received(topic: "tls/x", qos: 0, retain: false, payload: Array("over TLS \(version)".utf8))
            )
            sub.end()

            let (status, output) = try mosquittoPub(
                port: port, tls + ["-V", version, "-q", "1", "-t", "tls/y", "-m", "from \(version)"])
            XCTAssertEqual(status, 0, output)
            XCTAssertEqual(try line.nextMessage().text, "from \(version)")
        }
        // Without the certificate trusted, the handshake fails and nothing is published.
        let (status, _) = try mosquittoPub(
            port: port, ["-h", "127.0.0.1", "--capath", files.directory.path + "/none", "-t", "tls/y", "-m", "no"])
        XCTAssertNotEqual(status, 0)
        XCTAssertEqual(try line.pushesBeforePing(), [])
    }

    func testMQTTOverWebSocketWithPaho() throws {
        let daemon = try startMQTTDaemon(
            mqttConfig(numbers: ["ws.x", "ws.y"]), extraListeners: ["ws://127.0.0.1:0/mqtt"])
        let port = try daemon.webSocketPort()
        let line = try connect(daemon, "line")
        try subscribe(line, "ws.y")
        for version in [4, 5] {
            let (client, ack) = try paho(
                daemon, ["version": version, "client_id": "ws\(version)", "transport": "websockets", "path": "/mqtt"],
                port: port, label: "paho ws v\(version)")
            XCTAssertEqual(ack.code, 0)
            XCTAssertEqual(try client.subscribe("ws/x", qos: 1).codes, [1])
            XCTAssertEqual(try line.pub("ws.x", Array("to ws v\(version)".utf8)), .ok("1"))
            let got = try client.nextPublish()
            XCTAssertEqual([got.topic, got.text], ["ws/x", "to ws v\(version)"])
            let mid = try client.publish("ws/y", Array("from ws v\(version)".utf8), qos: 1)
            XCTAssertEqual(try client.ack(MQTTType.puback), MQTTAck(packetID: UInt16(mid), code: 0))
            XCTAssertEqual(try line.nextMessage(), Message("ws.y", text: "from ws v\(version)", from: "ws\(version)"))
            try client.disconnect()
        }
    }

    func testAClientCertificateOverMQTTSNamesItsUserWithItsRights() throws {
        let files = try certificate()
        let alice = try files.selfSigned("alice", commonName: "alice")
        let config = mqttConfig(
            numbers: ["tls.x", "other.x"],
            [
                "tls_cert: \"\(files.path("server.crt"))\"", "tls_key: \"\(files.path("server.key"))\"",
                "tls_client_ca: \"\(alice.certificate)\"",
                "users:",
                "  - name: alice", "    secret_hash: \"\(try hashSecret("alice-pw"))\"",
                "    publish: [\"tls.>\"]", "    subscribe: [\"tls.>\"]",
                "  - name: admin", "    secret_hash: \"\(try hashSecret("admin-pw"))\"",
                "    publish: [\">\"]", "    subscribe: [\">\"]",
            ])
        let daemon = try startMQTTDaemon(config, extraListeners: ["mqtts://127.0.0.1:0"])
        let port = try daemon.mqttsPort()
        let line = try connect(daemon, "admin")
        XCTAssertTrue(try line.command("HELLO name=admin token=admin-pw").description.hasPrefix("+OK subd"))
        try subscribe(line, "tls.x", "other.x")
        let tls = [
            "-h", "127.0.0.1", "--cafile", files.path("server.crt"), "--cert", alice.certificate, "--key", alice.key,
        ]
        for version in ["mqttv311", "mqttv5"] {
            // No user name or password: the certificate names the user.
            let (status, output) = try mosquittoPub(
                port: port, tls + ["-V", version, "-q", "1", "-i", "alice-\(version)", "-t", "tls/x", "-m", version])
            XCTAssertEqual(status, 0, output)
            XCTAssertEqual(try line.nextMessage(), Message("tls.x", text: version, from: "alice"), version)
            // With alice's rights only: other.x is refused (5.0's PUBACK 0x87, 3.1.1's PUBACK and dropped).
            _ = try mosquittoPub(port: port, tls + ["-V", version, "-q", "1", "-t", "other/x", "-m", "no"])
        }
        let sub = try mosquittoSub(daemon, tls + ["-V", "mqttv5", "-t", "tls/x", "-t", "other/x"], port: port)
        XCTAssertEqual(sub.granted, [0, 0x87])
        XCTAssertEqual(try line.pub("tls.x", Array("to alice".utf8)), .ok("2"))
        XCTAssertEqual(try line.nextMessage(), Message("tls.x", text: "to alice", from: "admin"))
        XCTAssertEqual(
            try sub.next(),
            MosquittoSub.Received(topic: "tls/x", qos: 0, retain: false, payload: Array("to alice".utf8)))
        XCTAssertEqual(try line.pushesBeforePing(), [], "nothing reached other.x")
        // Without a client certificate the handshake is refused.
        let (status, _) = try mosquittoPub(
            port: port, ["-h", "127.0.0.1", "--cafile", files.path("server.crt"), "-t", "tls/x", "-m", "anonymous"])
        XCTAssertNotEqual(status, 0)
        XCTAssertEqual(try line.pushesBeforePing(), [])
    }

    func testMQTTOverSecureWebSocketWithPaho() throws {
        let files = try certificate()
        let daemon = try startMQTTDaemon(
            mqttConfig(
                numbers: ["wss.x", "wss.y"],
                ["tls_cert: \"\(files.path("server.crt"))\"", "tls_key: \"\(files.path("server.key"))\""]),
            extraListeners: ["wss://127.0.0.1:0/mqtt"])
        let port = try daemon.webSocketPort(secure: true)
        let line = try connect(daemon, "line")
        try subscribe(line, "wss.y")
        for version in [4, 5] {
            let (client, ack) = try paho(
                daemon,
                [
                    "version": version, "client_id": "wss\(version)", "transport": "websockets", "path": "/mqtt",
                    "cafile": files.path("server.crt"),
                ], port: port, label: "paho wss v\(version)")
            XCTAssertEqual(ack.code, 0)
            XCTAssertEqual(try client.subscribe("wss/x", qos: 1).codes, [1])
            XCTAssertEqual(try line.pub("wss.x", Array("to wss v\(version)".utf8)), .ok("1"))
            let got = try client.nextPublish()
            XCTAssertEqual([got.topic, got.text], ["wss/x", "to wss v\(version)"])
            let mid = try client.publish("wss/y", Array("over wss v\(version)".utf8), qos: 1)
            XCTAssertEqual(try client.ack(MQTTType.puback), MQTTAck(packetID: UInt16(mid), code: 0))
            XCTAssertEqual(
                try line.nextMessage(), Message("wss.y", text: "over wss v\(version)", from: "wss\(version)"))
            try client.disconnect()
        }
    }
}
