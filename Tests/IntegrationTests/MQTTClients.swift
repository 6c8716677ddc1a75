import Foundation
import Glibc
import XCTest

/// Something the server's MQTT packets are read from: a raw socket of the test's (``MQTTRawClient``) or a real
/// client's tap (``PahoClient``).
protocol MQTTPeer: AnyObject {
    /// 4 for MQTT 3.1.1, 5 for 5.0: how the server's packets are decoded.
    var version: UInt8 { get }
    var label: String { get }
    /// The next packet from the server; throws `closed` when the connection ended first, `timeout` after `timeout`.
    func nextFrame(timeout: TimeInterval) throws -> MQTTFrame
}

extension MQTTPeer {
    /// The next packet, which must be of `type`.
    func next(_ type: UInt8, timeout: TimeInterval = 5) throws -> MQTTFrame {
        let frame = try nextFrame(timeout: timeout)
        guard frame.type == type else {
            throw HarnessError.malformed("\(label): expected \(MQTTType.name(type)), got \(frame)")
        }
        return frame
    }

    func connAck(timeout: TimeInterval = 5) throws -> MQTTConnAck {
        try next(MQTTType.connack, timeout: timeout).connAck(version: version)
    }

    func nextPublish(timeout: TimeInterval = 5) throws -> MQTTPublish {
        try next(MQTTType.publish, timeout: timeout).publish(version: version)
    }

    func subAck(timeout: TimeInterval = 5) throws -> MQTTSubAck {
        try next(MQTTType.suback, timeout: timeout).subAck(version: version)
    }

    func ack(_ type: UInt8, timeout: TimeInterval = 5) throws -> MQTTAck {
        try next(type, timeout: timeout).ack(type, version: version)
    }

    func disconnectPacket(timeout: TimeInterval = 5) throws -> MQTTDisconnect {
        try next(MQTTType.disconnect, timeout: timeout).disconnect()
    }

    /// The packets before the next one of `type` (which is read too), e.g. what came before a PINGRESP.
    func frames(before type: UInt8, timeout: TimeInterval = 5) throws -> [MQTTFrame] {
        var frames: [MQTTFrame] = []
        while true {
            let frame = try nextFrame(timeout: timeout)
            if frame.type == type { return frames }
            frames.append(frame)
        }
    }

    /// The PUBLISH packets before the next packet of `type`; any other packet is an error.
    func publishes(before type: UInt8, timeout: TimeInterval = 5) throws -> [MQTTPublish] {
        try frames(before: type, timeout: timeout).map { try $0.publish(version: version) }
    }
}

/// A raw MQTT client on a TCP socket of the test's: exactly the bytes the test gives are sent, every packet the
/// server sends is read (with a deadline), and the end of the connection is seen.
final class MQTTRawClient: MQTTPeer {
    private var fd: Int32
    private var buffer: [UInt8] = []
    private var ended = false
    var version: UInt8
    let label: String

    /// Connects to 127.0.0.1:`port`; `version` decodes the server's packets (set it to what the CONNECT says).
    init(port: UInt16, version: UInt8, label: String = "raw MQTT") throws {
        self.version = version
        self.label = label
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError.system("socket", errno) }
        var address = TestAddress.loopback(port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let error = errno
            Glibc.close(fd)
            throw HarnessError.system("\(label): connect to 127.0.0.1:\(port)", error)
        }
        var value = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close() }

    /// Closes the socket (a FIN, no DISCONNECT: to the server the client went away); idempotent.
    func close() {
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }

    /// Writes all of `bytes`.
    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw HarnessError.system("\(label): send", errno)
            }
            offset += count
        }
    }

    /// Reads what the socket has within `deadline`; false at the end of the stream (or a reset).
    private func fill(until deadline: Date) throws -> Bool {
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw HarnessError.timeout("\(label): nothing more from the server in time") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(left * 1000, 60_000)) + 1)
            if ready < 0 {
                if errno == EINTR { continue }
                throw HarnessError.system("\(label): poll", errno)
            }
            if ready == 0 { continue }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer += chunk[0..<count]
                return true
            }
            if count == 0 || errno == ECONNRESET { return false }
            if errno == EINTR || errno == EAGAIN { continue }
            throw HarnessError.system("\(label): recv", errno)
        }
    }

    func nextFrame(timeout: TimeInterval = 5) throws -> MQTTFrame {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            if let (frame, size) = try firstMQTTFrame(buffer[...]) {
                buffer.removeFirst(size)
                return frame
            }
            if ended { throw HarnessError.closed("\(label): the server closed the connection") }
            do {
                if try !fill(until: deadline) { ended = true }
            } catch HarnessError.timeout {
                throw HarnessError.timeout(
                    "\(label): no packet within \(timeout) s (unread: \(describeBytes(buffer)))")
            }
        }
    }

    /// Reads until the server closes the connection and returns the packets that came first, then closes the socket;
    /// throws `timeout` when it is still open after `timeout` seconds.
    @discardableResult
    func packetsUntilClosed(timeout: TimeInterval = 5) throws -> [MQTTFrame] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var frames: [MQTTFrame] = []
        while true {
            do {
                frames.append(try nextFrame(timeout: max(0.001, deadline.timeIntervalSinceNow)))
            } catch HarnessError.closed {
                guard buffer.isEmpty else {
                    throw HarnessError.malformed("\(label): closed after a partial packet \(describeBytes(buffer))")
                }
                // As a client does when the server closes: close too (the server waits for it before it ends the
                // session).
                close()
                return frames
            } catch HarnessError.timeout {
                throw HarnessError.timeout("\(label): still open after \(timeout) s; it sent \(frames)")
            }
        }
    }

    /// Sends CONNECT and reads the CONNACK.
    func connect(
        clientID: String, clean: Bool = true, keepAlive: UInt16 = 60, username: String? = nil,
        password: [UInt8]? = nil, will: MQTTEncode.Will? = nil, properties: [MQTTProperty] = []
    ) throws -> MQTTConnAck {
        try send(
            MQTTEncode.connect(
                version: version, clientID: clientID, clean: clean, keepAlive: keepAlive, username: username,
                password: password, will: will, properties: properties))
        return try connAck()
    }

    /// Sends SUBSCRIBE and reads its SUBACK.
    func subscribe(
        _ filters: [(String, UInt8)], packetID: UInt16 = 1, properties: [MQTTProperty] = []
    ) throws -> MQTTSubAck {
        try send(MQTTEncode.subscribe(version: version, packetID: packetID, filters, properties: properties))
        return try subAck()
    }

    /// Sends PUBLISH; for QoS 1 reads and returns its PUBACK.
    @discardableResult
    func publish(
        _ topic: String, _ payload: [UInt8], qos: UInt8 = 0, retain: Bool = false, packetID: UInt16 = 1,
        properties: [MQTTProperty] = []
    ) throws -> MQTTAck? {
        try send(
            MQTTEncode.publish(
                version: version, topic: topic, payload: payload, qos: qos, retain: retain, packetID: packetID,
                properties: properties))
        return qos == 1 ? try ack(MQTTType.puback) : nil
    }

    /// PINGREQ, and the packets that came before its PINGRESP (everything the server queued for this client before
    /// it read the PINGREQ).
    func framesBeforePing(timeout: TimeInterval = 5) throws -> [MQTTFrame] {
        try send(MQTTEncode.pingreq)
        return try frames(before: MQTTType.pingresp, timeout: timeout)
    }
}

/// A real MQTT client: Debian's python3-paho-mqtt running `mqtt_client.py` (beside this file; its docstring has the
/// details). paho makes every packet it sends; the script reports each packet of the server's, which this class
/// decodes with ``MQTTFrame``.
final class PahoClient: MQTTPeer {
    private let child: ChildProcess
    private var packets: [MQTTFrame] = []
    private var events: [[String: Any]] = []
    private(set) var closed = false
    let version: UInt8
    let label: String

    /// Starts the script with `options` (the script's JSON; `port` and `version` at least); it connects at once.
    init(options: [String: Any], label: String = "paho") throws {
        version = UInt8(options["version"] as? Int ?? 5)
        self.label = label
        let python = try Self.python()
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("mqtt_client.py").path
        let json = try JSONSerialization.data(withJSONObject: options, options: [.sortedKeys])
        child = try ChildProcess(
            executable: python, arguments: [script, String(decoding: json, as: UTF8.self)], stdinPipe: true,
            label: label)
    }

    /// The python3 that imports paho, found once per test process.
    nonisolated(unsafe) private static var foundPython: URL?

    private static func python() throws -> URL {
        if let foundPython { return foundPython }
        let found = try ExternalTool.python(importing: "paho.mqtt.client", package: "python3-paho-mqtt")
        foundPython = found
        return found
    }

    /// Reads the script's next line into the queues; throws on timeout or when the script ended.
    private func readEvent(until deadline: Date) throws {
        let left = deadline.timeIntervalSinceNow
        guard left > 0 else { throw HarnessError.timeout("\(label): nothing in time; stderr: \(child.stderr.text)") }
        let line: [UInt8]
        do {
            line = try child.stdout.readLine(timeout: left)
        } catch HarnessError.timeout(let text) {
            throw HarnessError.timeout("\(label): \(text); stderr: \(child.stderr.text)")
        }
        guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] else {
            throw HarnessError.malformed("\(label): not a JSON object: \(describeBytes(line))")
        }
        switch object["event"] as? String {
        case "packet":
            guard let type = object["type"] as? Int, let flags = object["flags"] as? Int,
                let hex = object["body"] as? String, let body = hexBytes(hex)
            else { throw HarnessError.malformed("\(label): bad packet event \(object)") }
            packets.append(MQTTFrame(type: UInt8(type), flags: UInt8(flags), body: body))
        case "closed":
            closed = true
            events.append(object)
        case "error":
            throw HarnessError.process("\(label): \(object["message"] ?? "")")
        default:
            events.append(object)
        }
    }

    func nextFrame(timeout: TimeInterval = 5) throws -> MQTTFrame {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while packets.isEmpty {
            if closed { throw HarnessError.closed("\(label): the connection ended") }
            try readEvent(until: deadline)
        }
        return packets.removeFirst()
    }

    /// Waits for the connection's end (paho's on_disconnect); throws `timeout` when it stays open.
    func waitClosed(timeout: TimeInterval = 5) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while !closed { try readEvent(until: deadline) }
    }

    /// Writes one command and waits for its `sent` event; returns its packet id.
    @discardableResult
    private func command(_ object: [String: Any], timeout: TimeInterval = 5) throws -> Int {
        guard let stdin = child.stdin else { throw HarnessError.process("\(label) without stdin") }
        let json = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        try stdin.write(contentsOf: json + Data([0x0A]))
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            if let index = events.firstIndex(where: { $0["event"] as? String == "sent" }) {
                return events.remove(at: index)["mid"] as? Int ?? 0
            }
            try readEvent(until: deadline)
        }
    }

    /// Publishes; paho waits for nothing (a QoS 1 message's PUBACK comes as a packet).
    @discardableResult
    func publish(
        _ topic: String, _ payload: [UInt8], qos: Int = 0, retain: Bool = false, properties: [String: Any] = [:]
    ) throws -> Int {
        try command([
            "op": "publish", "topic": topic, "payload": hexString(payload), "qos": qos, "retain": retain,
            "properties": properties,
        ])
    }

    /// One filter of a SUBSCRIBE: QoS and the 5.0 options.
    struct Filter {
        var filter: String
        var qos = 0
        var noLocal = false
        var retainAsPublished = false
        var retainHandling = 0
    }

    /// Subscribes and reads the SUBACK.
    func subscribe(_ filters: [Filter], properties: [String: Any] = [:]) throws -> MQTTSubAck {
        let list: [[Any]] = filters.map {
            [$0.filter, $0.qos, $0.noLocal, $0.retainAsPublished, $0.retainHandling]
        }
        let mid = try command(["op": "subscribe", "filters": list, "properties": properties])
        let ack = try subAck()
        guard ack.packetID == mid else {
            throw HarnessError.malformed("\(label): SUBACK for \(ack.packetID), SUBSCRIBE was \(mid)")
        }
        return ack
    }

    func subscribe(_ filter: String, qos: Int = 0) throws -> MQTTSubAck {
        try subscribe([Filter(filter: filter, qos: qos)])
    }

    /// PINGREQ, and the packets that came before its PINGRESP.
    func framesBeforePing(timeout: TimeInterval = 5) throws -> [MQTTFrame] {
        try command(["op": "ping"])
        return try frames(before: MQTTType.pingresp, timeout: timeout)
    }

    /// Sends DISCONNECT (5.0: with `reason` and properties) and waits for the connection's end.
    func disconnect(reason: Int = 0, properties: [String: Any] = [:]) throws {
        try command(["op": "disconnect", "reason": reason, "properties": properties])
        try waitClosed()
    }

    /// Kills the script: its socket closes without a DISCONNECT, as a crashed client's would.
    func kill() {
        child.kill9IfRunning()
    }

    /// Ends the script (teardown).
    func end() { child.kill9IfRunning() }
}

/// A `mosquitto_sub` in the background, its messages printed as `MSG topic qos retain length hex` lines (stdbuf
/// makes its debug lines come out at once too, so that its SUBACK is seen).
final class MosquittoSub {
    /// One message it printed.
    struct Received: Equatable, CustomStringConvertible {
        var topic: String
        var qos: Int
        var retain: Bool
        var payload: [UInt8]
        var text: String { String(decoding: payload, as: UTF8.self) }
        var description: String { "\(topic) q\(qos) r\(retain ? 1 : 0) \(describeBytes(payload, limit: 60))" }
    }

    let child: ChildProcess
    /// The reason codes of its SUBACK ("Subscribed (mid: 1): 0, 1").
    private(set) var granted: [Int] = []

    /// Starts `mosquitto_sub -p port arguments...` and, unless `waitForSubAck` is false, waits until its SUBACK came.
    init(port: UInt16, _ arguments: [String], waitForSubAck: Bool = true, label: String = "mosquitto_sub") throws {
        let all = ["-oL", "mosquitto_sub", "-p", String(port), "-d", "-F", "MSG %t %q %r %l %x"] + arguments
        child = try ChildProcess(executable: URL(fileURLWithPath: "/usr/bin/stdbuf"), arguments: all, label: label)
        guard waitForSubAck else { return }
        do {
            let codes = try child.stdout.waitFor("its SUBACK", timeout: 10) { text in
                text.firstMatch(of: /Subscribed \(mid: [0-9]+\):([0-9, ]*)\n/).map { String($0.output.1) }
            }
            granted = codes.split(whereSeparator: { $0 == " " || $0 == "," }).compactMap { Int($0) }
        } catch {
            child.kill9IfRunning()
            throw HarnessError.process("\(label) \(arguments): \(error); stderr: \(child.stderr.text)")
        }
    }

    /// The next message it printed (debug lines skipped).
    func next(timeout: TimeInterval = 5) throws -> Received {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            let line = String(
                decoding: try child.stdout.readLine(timeout: max(0.01, deadline.timeIntervalSinceNow)), as: UTF8.self)
            guard line.hasPrefix("MSG ") else { continue }
            let words = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            guard words.count == 6, let qos = Int(words[2]), let length = Int(words[4]),
                let payload = hexBytes(words[5]), payload.count == length
            else { throw HarnessError.malformed("mosquitto_sub printed '\(line)'") }
            return Received(topic: words[1], qos: qos, retain: words[3] == "1", payload: payload)
        }
    }

    /// Everything it printed to stderr.
    var stderr: String { child.stderr.text }

    func end() { child.kill9IfRunning() }
}

/// Runs `mosquitto_pub -p port arguments...` to its end (10 s at most); `stdin` is fed to it when given.
func mosquittoPub(port: UInt16, _ arguments: [String], stdin: [UInt8]? = nil) throws -> (
    status: Int32, output: String
) {
    let child = try ChildProcess(
        executable: URL(fileURLWithPath: "/usr/bin/mosquitto_pub"), arguments: ["-p", String(port)] + arguments,
        stdinPipe: stdin != nil, label: "mosquitto_pub")
    if let stdin { try child.writeStdinAndClose(stdin) }
    guard let status = child.waitForExit(timeout: 10) else {
        child.kill9IfRunning()
        throw HarnessError.timeout("mosquitto_pub \(arguments) did not exit within 10 s: \(child.stderr.text)")
    }
    return (status, child.stdout.text + child.stderr.text)
}

/// `bytes` in lowercase hexadecimal.
func hexString(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// The bytes of lowercase or uppercase hexadecimal text; nil when it is not.
func hexBytes(_ text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
        guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
        bytes.append(high << 4 | low)
        index += 2
    }
    return bytes
}

private func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
    default: return nil
    }
}
