import Foundation
import XCTest

/// A real WebSocket client: Debian's python3-websockets running `websocket-client.py` (beside this file; its
/// docstring has the details), its connection bridged to ``lines``: what the test sends there goes out as binary
/// messages, and the data of every message received comes back there, so the line protocol reads as on TCP. Exact
/// messages, pings and the close handshake go through the script's stdin commands.
final class PythonWebSocket {
    /// What opening a connection came to.
    enum Outcome {
        /// The upgrade was accepted.
        case open(PythonWebSocket)
        /// The server answered the upgrade with this HTTP status.
        case refused(status: Int)
    }

    /// The running script.
    let child: ChildProcess
    /// The line protocol, through the script's bridge.
    let lines: LineClient
    /// The subprotocol the server chose; nil for none.
    let subprotocol: String?

    private init(child: ChildProcess, bridgePort: UInt16) throws {
        self.child = child
        lines = try LineClient.connect(port: bridgePort, label: "\(child.label) bridge")
        let chosen = try Self.event(of: child, "subprotocol")
        subprotocol = chosen == "-" ? nil : chosen
    }

    /// Connects to `url` (`ws://` or `wss://`), sending `origin` when given, trusting `caFile` when given, offering
    /// the subprotocol `subd` unless `offeringSubprotocol` is false.
    static func open(
        _ url: String, origin: String? = nil, caFile: String? = nil, offeringSubprotocol: Bool = true,
        label: String = "websocket-client.py"
    ) throws -> Outcome {
        let python = try ExternalTool.python(importing: "websockets", package: "python3-websockets")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("websocket-client.py").path
        var arguments = [script, url]
        if let origin { arguments += ["--origin", origin] }
        if let caFile { arguments += ["--ca", caFile] }
        if !offeringSubprotocol { arguments.append("--no-subprotocol") }
        let child = try ChildProcess(executable: python, arguments: arguments, stdinPipe: true, label: label)
        do {
            let line = try Self.nextLine(of: child)
            if let status = line.wholeMatch(of: /refused ([0-9]+)/).flatMap({ Int($0.output.1) }) {
                child.kill9IfRunning()
                return .refused(status: status)
            }
            guard let port = line.wholeMatch(of: /port ([0-9]+)/).flatMap({ UInt16($0.output.1) }) else {
                throw HarnessError.malformed("\(label): '\(line)' instead of 'port N'")
            }
            return .open(try PythonWebSocket(child: child, bridgePort: port))
        } catch {
            child.kill9IfRunning()
            throw HarnessError.process("\(label) \(url): \(error); its stderr: \(child.stderr.text)")
        }
    }

    /// The next line the script printed.
    private static func nextLine(of child: ChildProcess, timeout: TimeInterval = 10) throws -> String {
        String(decoding: try child.stdout.readLine(timeout: timeout), as: UTF8.self)
    }

    /// The word after `kind` in the script's next line, which must be a `kind` event.
    private static func event(of child: ChildProcess, _ kind: String, timeout: TimeInterval = 10) throws -> String {
        let line = try nextLine(of: child, timeout: timeout)
        guard line.hasPrefix(kind + " ") else {
            throw HarnessError.malformed("\(child.label): '\(line)' instead of '\(kind) ...'")
        }
        return String(line.dropFirst(kind.count + 1))
    }

    /// `bytes` in hexadecimal, as the script's commands take them.
    private static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    /// Writes one stdin command: `verb` and `words`.
    private func command(_ verb: String, _ words: [String]) throws {
        guard let stdin = child.stdin else { throw HarnessError.process("\(child.label) without stdin") }
        try stdin.write(contentsOf: Data((([verb] + words).joined(separator: " ") + "\n").utf8))
    }

    /// Sends one binary message holding `bytes`.
    func sendBinary(_ bytes: [UInt8]) throws { try command("binary", [Self.hex(bytes)]) }

    /// Sends one text message holding `text`.
    func sendText(_ text: String) throws { try command("text", [Self.hex(Array(text.utf8))]) }

    /// Sends one binary message in `fragments` (none of them empty).
    func sendFragments(_ fragments: [[UInt8]]) throws { try command("fragments", fragments.map(Self.hex)) }

    /// Sends a ping carrying `payload` and waits for its pong (python3-websockets matches it by its payload).
    func ping(_ payload: [UInt8]) throws {
        try command("ping", [Self.hex(payload)])
        XCTAssertEqual(try Self.event(of: child, "pong"), Self.hex(payload))
    }

    /// Starts the close handshake with `code`.
    func close(code: Int) throws { try command("close", [String(code)]) }

    /// Waits for the connection to end and returns the code of the server's close frame (1006 without one).
    func closeCode(timeout: TimeInterval = 5) throws -> Int {
        let text = try Self.event(of: child, "closed", timeout: timeout)
        guard let code = Int(text) else { throw HarnessError.malformed("\(child.label): closed '\(text)'") }
        return code
    }

    /// Ends the script and the bridge.
    func end() {
        lines.close()
        child.kill9IfRunning()
    }
}

/// A WebSocket client written by hand on a raw socket (a ``LineClient``), for what a library will not send: an
/// upgrade request as given, and frames made byte by byte (masked or not, any opcode, any RSV bits, any length);
/// the server's frames are read as they come. `@unchecked Sendable`: one thread at a time uses it (a test hands it
/// to a reader thread once it is set up, and reads it only there from then on).
final class RawWebSocket: @unchecked Sendable {
    /// One frame of the server's.
    struct Frame: Equatable {
        var fin = true
        var opcode: UInt8
        var payload: [UInt8]
    }

    /// Data of the server's messages received and not yet read by ``readStream(_:)``.
    private var unread: [UInt8] = []
    /// The socket.
    let socket: LineClient
    /// The status code of the server's answer to the upgrade request.
    let status: Int
    /// The fields of that answer, names in lower case.
    let fields: [String: String]

    /// The `Sec-WebSocket-Key` of ``request(method:path:changing:)``: RFC 6455's example (section 1.3).
    static let key = "dGhlIHNhbXBsZSBub25jZQ=="
    /// The `Sec-WebSocket-Accept` that answers ``key`` (RFC 6455 section 1.3).
    static let acceptKey = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    /// The opcodes (RFC 6455 section 5.2).
    static let continuation: UInt8 = 0x0, text: UInt8 = 0x1, binary: UInt8 = 0x2
    static let close: UInt8 = 0x8, ping: UInt8 = 0x9, pong: UInt8 = 0xA

    /// A valid upgrade request for `path` offering the subprotocol `subd`, with the fields in `changes` set (a new
    /// one added at the end) and those `removing` names left out.
    static func request(
        _ path: String, method: String = "GET", changing changes: [String: String] = [:], removing: [String] = []
    ) -> [UInt8] {
        var fields: [(String, String)] = [
            ("Host", "127.0.0.1"), ("Upgrade", "websocket"), ("Connection", "Upgrade"), ("Sec-WebSocket-Key", key),
            ("Sec-WebSocket-Version", "13"), ("Sec-WebSocket-Protocol", "subd"),
        ]
        fields = fields.map { name, value in (name, changes[name] ?? value) }
        fields += changes.filter { name, _ in !fields.contains { $0.0 == name } }.sorted { $0.key < $1.key }
        let head = fields.filter { !removing.contains($0.0) }.map { "\($0.0): \($0.1)\r\n" }.joined()
        return Array("\(method) \(path) HTTP/1.1\r\n\(head)\r\n".utf8)
    }

    /// Connects to `127.0.0.1:port`, sends `request` and reads the answer's head. `receiveBuffer` as for
    /// ``LineClient/connect(port:label:timeout:receiveBuffer:)``.
    init(port: UInt16, request: [UInt8], label: String = "raw WebSocket", receiveBuffer: Int32? = nil) throws {
        socket = try LineClient.connect(port: port, label: label, receiveBuffer: receiveBuffer)
        try socket.send(request)
        let statusLine = String(decoding: try socket.readLine(), as: UTF8.self)
        guard let status = statusLine.firstMatch(of: /^HTTP\/1\.1 ([0-9]{3})\s/).flatMap({ Int($0.output.1) }) else {
            throw HarnessError.malformed("\(label): status line '\(statusLine)'")
        }
        var fields: [String: String] = [:]
        while case let line = String(decoding: try socket.readLine(), as: UTF8.self), line != "\r" {
            let parts = line.dropLast().split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { throw HarnessError.malformed("\(label): field '\(line)'") }
            fields[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces)
        }
        self.status = status
        self.fields = fields
    }

    /// Opens a connection upgraded at `path` (failing when the answer is not 101).
    static func upgraded(port: UInt16, path: String, label: String, receiveBuffer: Int32? = nil) throws
        -> RawWebSocket
    {
        let raw = try RawWebSocket(
            port: port, request: request(path), label: label, receiveBuffer: receiveBuffer)
        guard raw.status == 101 else { throw HarnessError.malformed("\(label): upgrade answered \(raw.status)") }
        return raw
    }

    /// A client frame: `payload` under `opcode`, masked unless `masked` is false, with `rsv` in the RSV bits
    /// (0x70); `length` claims another payload length than `payload`'s (for a frame announced too large).
    static func frame(
        _ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0, masked: Bool = true,
        length: Int? = nil
    ) -> [UInt8] {
        let length = length ?? payload.count
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | rsv | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        switch length {
        case 0..<126: bytes.append(maskBit | UInt8(length))
        case 126..<65_536: bytes += [maskBit | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        default: bytes += [maskBit | 127] + (0..<8).reversed().map { UInt8((length >> ($0 * 8)) & 0xFF) }
        }
        guard masked else { return bytes + payload }
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        return bytes + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    /// Sends `frame(...)`'s bytes.
    func send(_ frame: [UInt8]) throws { try socket.send(frame) }

    /// Sends the line protocol's `text` in one masked binary message.
    func sendCommands(_ text: String) throws { try send(Self.frame(Self.binary, Array(text.utf8))) }

    /// The server's next frame (which must not be masked).
    func readFrame() throws -> Frame {
        let head = try socket.readBytes(2)
        guard head[1] & 0x80 == 0 else { throw HarnessError.malformed("\(socket.label): a masked server frame") }
        var length = Int(head[1] & 0x7F)
        if length >= 126 {
            length = try socket.readBytes(length == 126 ? 2 : 8).reduce(0) { $0 << 8 | Int($1) }
        }
        return Frame(fin: head[0] & 0x80 != 0, opcode: head[0] & 0x0F, payload: try socket.readBytes(length))
    }

    /// The next `count` bytes of the line protocol the server sent, across as many binary messages as they take
    /// (a message may end inside them, or go on after them: its rest is kept for the next call).
    func readStream(_ count: Int) throws -> [UInt8] {
        while unread.count < count {
            let frame = try readFrame()
            guard frame.opcode == Self.binary || frame.opcode == Self.continuation else {
                throw HarnessError.malformed("\(socket.label): frame \(frame) while awaiting data")
            }
            unread += frame.payload
        }
        defer { unread.removeFirst(count) }
        return Array(unread.prefix(count))
    }

    /// The line protocol the server sent: the data of binary messages until it ends with a LF.
    func readReplies() throws -> String {
        var bytes: [UInt8] = []
        repeat {
            let frame = try readFrame()
            guard frame.opcode == Self.binary || frame.opcode == Self.continuation else {
                throw HarnessError.malformed("\(socket.label): frame \(frame) while awaiting data")
            }
            bytes += frame.payload
        } while bytes.last != 0x0A
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads frames up to the server's close frame and returns its code, then expects the end of the connection;
    /// data frames before it are skipped when `skippingData`, else an error.
    func closeCode(skippingData: Bool = false) throws -> Int {
        while true {
            let frame = try readFrame()
            if frame.opcode == Self.close {
                guard frame.payload.count >= 2 else { throw HarnessError.malformed("close frame without a code") }
                try socket.expectClosed()
                return Int(frame.payload[0]) << 8 | Int(frame.payload[1])
            }
            guard skippingData && frame.opcode == Self.binary else {
                throw HarnessError.malformed("\(socket.label): frame \(frame) while awaiting the close frame")
            }
        }
    }
}
