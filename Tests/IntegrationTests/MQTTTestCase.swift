import Foundation
import XCTest

/// The base of the MQTT tests: a real subd with an `mqtt://127.0.0.1:0` listener besides the harness's line
/// listener, and real MQTT clients (mosquitto_sub and mosquitto_pub, paho through `mqtt_client.py`) and the tests'
/// raw ones (``MQTTRawClient``), every one of them ended at teardown before the daemons are stopped.
class MQTTTestCase: IntegrationTestCase {
    private var rawClients: [MQTTRawClient] = []
    private var pahoClients: [PahoClient] = []
    private var mosquittoSubs: [MosquittoSub] = []

    override func tearDown() {
        for client in rawClients { client.close() }
        rawClients.removeAll()
        for client in pahoClients { client.end() }
        pahoClients.removeAll()
        for sub in mosquittoSubs { sub.end() }
        mosquittoSubs.removeAll()
        super.tearDown()
    }

    /// A subd with `config`, the harness's line listener and `mqtt://127.0.0.1:0` (plus `extraListeners`).
    func startMQTTDaemon(
        _ config: DaemonConfig = DaemonConfig(), extraListeners: [String] = [], environment: [String: String?] = [:]
    ) throws -> Daemon {
        var arguments = ["--listen", "mqtt://127.0.0.1:0"]
        for listener in extraListeners { arguments += ["--listen", listener] }
        return try startDaemon(config, extraArguments: arguments, environment: environment)
    }

    /// A config with the `mqtt_*` (or any other) keys given as YAML lines besides `numbers`.
    func mqttConfig(numbers: [String] = [], _ lines: [String] = [], maxPending: Int? = nil) -> DaemonConfig {
        var config = DaemonConfig(numbers: numbers, extraLines: lines)
        config.maxPending = maxPending
        return config
    }

    /// A raw client of `daemon`'s MQTT listener; closed at teardown.
    func raw(_ daemon: Daemon, version: UInt8, _ label: String = "raw") throws -> MQTTRawClient {
        let client = try MQTTRawClient(port: try daemon.mqttPort(), version: version, label: label)
        rawClients.append(client)
        return client
    }

    /// A raw client connected (CONNACK accepted, asserted) as `clientID`.
    func rawConnected(
        _ daemon: Daemon, version: UInt8, clientID: String, clean: Bool = true, keepAlive: UInt16 = 60,
        properties: [MQTTProperty] = [], will: MQTTEncode.Will? = nil, file: StaticString = #filePath,
        line: UInt = #line
    ) throws -> (MQTTRawClient, MQTTConnAck) {
        let client = try raw(daemon, version: version, clientID)
        let ack = try client.connect(
            clientID: clientID, clean: clean, keepAlive: keepAlive, will: will, properties: properties)
        XCTAssertEqual(ack.code, 0, "CONNECT of \(clientID)", file: file, line: line)
        return (client, ack)
    }

    /// A paho client of `daemon` (options of `mqtt_client.py`, `port` filled in) with its CONNACK read.
    func paho(
        _ daemon: Daemon, _ options: [String: Any] = [:], port: UInt16? = nil, label: String = "paho"
    ) throws -> (PahoClient, MQTTConnAck) {
        var all = options
        all["port"] = Int(try port ?? daemon.mqttPort())
        let client = try PahoClient(options: all, label: label)
        pahoClients.append(client)
        return (client, try client.connAck(timeout: 10))
    }

    /// A paho client whose CONNECT was accepted (asserted).
    func pahoConnected(
        _ daemon: Daemon, _ options: [String: Any] = [:], label: String = "paho", file: StaticString = #filePath,
        line: UInt = #line
    ) throws -> PahoClient {
        let (client, ack) = try paho(daemon, options, label: label)
        XCTAssertEqual(ack.code, 0, "\(label): CONNACK", file: file, line: line)
        return client
    }

    /// A `mosquitto_sub` of `daemon` (its SUBACK seen); ended at teardown.
    func mosquittoSub(
        _ daemon: Daemon, _ arguments: [String], port: UInt16? = nil, label: String = "mosquitto_sub"
    ) throws -> MosquittoSub {
        let sub = try MosquittoSub(port: try port ?? daemon.mqttPort(), arguments, label: label)
        mosquittoSubs.append(sub)
        return sub
    }

    /// Runs `mosquitto_pub` against `daemon` and asserts it exits 0.
    func mosquittoPublish(
        _ daemon: Daemon, _ arguments: [String], stdin: [UInt8]? = nil, file: StaticString = #filePath,
        line: UInt = #line
    ) throws {
        let (status, output) = try mosquittoPub(port: try daemon.mqttPort(), arguments, stdin: stdin)
        XCTAssertEqual(status, 0, "mosquitto_pub \(arguments): \(output)", file: file, line: line)
    }

    /// The JSON object of a `$SYS.` message.
    func json(_ message: Message, file: StaticString = #filePath, line: UInt = #line) -> [String: Any] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any] else {
            XCTFail("not a JSON object: \(message)", file: file, line: line)
            return [:]
        }
        return object
    }

    /// A line client subscribed to `$SYS.client.disconnected`, for ``waitForDisconnect(_:of:)``.
    func disconnectWatcher(_ daemon: Daemon) throws -> LineClient {
        let watcher = try connect(daemon, "$SYS.client.disconnected")
        try subscribe(watcher, "$SYS.client.disconnected")
        return watcher
    }

    /// Waits until the server posted the end of the connection whose client name is `name` (an MQTT client's name is
    /// its client identifier) and returns the event's reason.
    @discardableResult
    func waitForDisconnect(_ watcher: LineClient, of name: String) throws -> String? {
        while true {
            let event = json(try nextMessage(watcher, on: "$SYS.client.disconnected"))
            if event["name"] as? String == name { return event["reason"] as? String }
        }
    }

    /// Reads the line client's pushes until a MSG on `number` and returns it (other pushes are skipped).
    func nextMessage(_ client: LineClient, on number: String) throws -> Message {
        while true {
            let message = try client.nextMessage()
            if message.number == number { return message }
        }
    }
}

extension Daemon {
    /// The port of the `mqtt://` listener (its `listening on mqtt 127.0.0.1:PORT` line).
    func mqttPort() throws -> UInt16 { try listenerPort("mqtt") }

    /// The port of the `mqtts://` listener.
    func mqttsPort() throws -> UInt16 { try listenerPort("mqtts") }
}
