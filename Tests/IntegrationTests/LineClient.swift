import Foundation
import Glibc

/// A raw blocking client of the subd line protocol over TCP or a Unix socket, for tests.
///
/// Every read has a timeout (SO_RCVTIMEO), so a server that hangs fails the test instead of blocking it forever.
/// Pushes (`MSG`, `GONE`) that arrive while a reply is awaited are queued for `nextPush()`; replies that arrive while
/// a push is awaited are queued for `readReply()`. Use one client from one thread at a time.
final class LineClient: @unchecked Sendable {
    private var fd: Int32
    private var buffer: [UInt8] = []
    private var start = 0
    private var pushes: [Push] = []
    private var replies: [Reply] = []
    /// A name for failure messages.
    let label: String
    /// The receive timeout of every read, in seconds.
    let timeout: TimeInterval

    private init(fd: Int32, label: String, timeout: TimeInterval) {
        self.fd = fd
        self.label = label
        self.timeout = timeout
    }

    deinit { close() }

    /// Connects to `127.0.0.1:port`. `receiveBuffer` sets SO_RCVBUF before connecting (a small one makes a
    /// subscriber that does not read fall behind sooner).
    static func connect(
        port: UInt16, label: String = "client", timeout: TimeInterval = 5, receiveBuffer: Int32? = nil
    ) throws -> LineClient {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError.system("socket", errno) }
        let client = LineClient(fd: fd, label: label, timeout: timeout)
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        try client.setTimeouts()
        var address = TestAddress.loopback(port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else { throw HarnessError.system("connect to 127.0.0.1:\(port)", errno) }
        return client
    }

    /// Connects to the Unix stream socket at `path`.
    static func connect(unixPath path: String, label: String = "unix client", timeout: TimeInterval = 5) throws
        -> LineClient
    {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError.system("socket", errno) }
        let client = LineClient(fd: fd, label: label, timeout: timeout)
        try client.setTimeouts()
        var address = try TestAddress.unix(path)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else { throw HarnessError.system("connect to unix \(path)", errno) }
        return client
    }

    private func setTimeouts() throws {
        var value = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            guard setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size)) == 0 else {
                throw HarnessError.system("setsockopt", errno)
            }
        }
    }

    /// Closes the socket (idempotent).
    func close() {
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }

    /// Resets the connection instead of closing it: SO_LINGER {on, 0 s} and then close, so the kernel sends RST (no
    /// FIN) and drops whatever is unsent or unread (idempotent).
    func reset() {
        guard fd >= 0 else { return }
        var abort = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort, socklen_t(MemoryLayout<linger>.size))
        close()
    }

    /// Shuts down the write side (the server reads end of stream); reading goes on.
    func shutdownWrite() throws {
        guard Glibc.shutdown(fd, Int32(SHUT_WR)) == 0 else { throw HarnessError.system("\(label): shutdown", errno) }
    }

    // MARK: Sending

    /// Writes all of `bytes` (blocking, with the send timeout).
    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    throw HarnessError.timeout("\(label): send blocked for \(timeout) s")
                }
                throw HarnessError.system("\(label): send", errno)
            }
            offset += count
        }
    }

    /// Writes the UTF-8 bytes of `text` as they are (add the line ending yourself).
    func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Writes `line` followed by LF.
    func sendLine(_ line: String) throws { try send(Array(line.utf8) + [0x0A]) }

    /// Writes `PUB <number> <n>` LF payload LF.
    func sendPub(_ number: String, _ payload: [UInt8]) throws {
        try send(Array("PUB \(number) \(payload.count)\n".utf8) + payload + [0x0A])
    }

    /// Sends `line` + LF and reads its reply.
    func command(_ line: String) throws -> Reply {
        try sendLine(line)
        return try readReply()
    }

    /// Publishes `payload` with PUB and reads the reply.
    func pub(_ number: String, _ payload: [UInt8]) throws -> Reply {
        try sendPub(number, payload)
        return try readReply()
    }

    // MARK: Receiving

    /// Reads more bytes into the buffer; throws `closed` at end of stream, `timeout` when nothing came in time.
    private func fill(_ what: @autoclosure () -> String) throws {
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 1 << 20 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
                return
            }
            if count == 0 {
                throw HarnessError.closed("\(label): server closed the connection while awaiting \(what())")
            }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK {
                let unread = describeBytes(buffer[start...])
                throw HarnessError.timeout(
                    "\(label): nothing within \(timeout) s while awaiting \(what()) (unread: \(unread))")
            }
            if errno == ECONNRESET { throw HarnessError.closed("\(label): connection reset while awaiting \(what())") }
            throw HarnessError.system("\(label): recv", errno)
        }
    }

    /// The next line as bytes, without its LF.
    func readLine() throws -> [UInt8] {
        var scanned = 0  // bytes after `start` known to hold no LF; `fill` may move `start`
        while true {
            if let newline = buffer[(start + scanned)...].firstIndex(of: 0x0A) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                return line
            }
            scanned = buffer.count - start
            try fill("a line")
        }
    }

    /// Exactly the next `count` bytes.
    func readBytes(_ count: Int) throws -> [UInt8] {
        while buffer.count - start < count { try fill("\(count) bytes") }
        let bytes = Array(buffer[start..<start + count])
        start += count
        return bytes
    }

    private enum Frame {
        case reply(Reply)
        case push(Push)
    }

    /// Reads one reply or push from the wire.
    private func readFrame() throws -> Frame {
        let lineBytes = try readLine()
        guard let line = String(validating: lineBytes, as: UTF8.self) else {
            throw HarnessError.malformed("\(label): line is not UTF-8: \(describeBytes(lineBytes))")
        }
        switch lineBytes.first {
        case UInt8(ascii: "+"):
            return .reply(.status(String(line.dropFirst())))
        case UInt8(ascii: "-"):
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2, parts[0] == "-ERR", !parts[1].isEmpty else {
                throw HarnessError.malformed("\(label): error reply not '-ERR CODE text': \(line)")
            }
            return .reply(.error(code: String(parts[1]), message: parts.count > 2 ? String(parts[2]) : ""))
        case UInt8(ascii: "*"):
            guard let count = Int(line.dropFirst()), count >= 0 else {
                throw HarnessError.malformed("\(label): bad list header: \(line)")
            }
            var lines: [String] = []
            for _ in 0..<count {
                lines.append(String(decoding: try readLine(), as: UTF8.self))
            }
            return .reply(.list(lines))
        default:
            return .push(try parsePush(line))
        }
    }

    private func parsePush(_ line: String) throws -> Push {
        let words = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        switch words.first {
        case "MSG":
            guard words.count >= 3, !words[1].isEmpty, let count = Int(words[2]), count >= 0,
                String(count) == words[2]
            else {
                throw HarnessError.malformed("\(label): bad MSG line: \(line)")
            }
            var attributes: [String: String] = [:]
            for word in words.dropFirst(3) {
                guard let equals = word.firstIndex(of: "="), equals != word.startIndex else {
                    throw HarnessError.malformed("\(label): MSG key not 'key=value': \(line)")
                }
                attributes[String(word[..<equals])] = String(word[word.index(after: equals)...])
            }
            let payload = try readBytes(count)
            let end = try readBytes(1)
            guard end == [0x0A] else {
                throw HarnessError.malformed("\(label): no LF after the \(count)-byte payload of '\(line)'")
            }
            return .message(Message(number: words[1], payload: payload, attributes: attributes))
        case "GONE":
            guard words.count == 2, !words[1].isEmpty else {
                throw HarnessError.malformed("\(label): bad GONE line: \(line)")
            }
            return .gone(words[1])
        default:
            return .other(line)
        }
    }

    /// The next reply; pushes that come before it are queued.
    func readReply() throws -> Reply {
        if !replies.isEmpty { return replies.removeFirst() }
        while true {
            switch try readFrame() {
            case .reply(let reply): return reply
            case .push(let push): pushes.append(push)
            }
        }
    }

    /// The next push (queued or read from the wire); replies that come before it are queued.
    func nextPush() throws -> Push {
        if !pushes.isEmpty { return pushes.removeFirst() }
        while true {
            switch try readFrame() {
            case .reply(let reply): replies.append(reply)
            case .push(let push): return push
            }
        }
    }

    /// The next push, which must be a MSG.
    func nextMessage() throws -> Message {
        let push = try nextPush()
        guard let message = push.message else {
            throw HarnessError.malformed("\(label): expected a MSG push, got \(push)")
        }
        return message
    }

    /// Takes the pushes queued so far (those that arrived before the replies already read).
    func takePushes() -> [Push] {
        defer { pushes.removeAll() }
        return pushes
    }

    /// Sends PING and returns the pushes that arrived before its reply (all pushes queued for this session before
    /// the server handled the PING). Throws if the reply is not `+PONG`.
    func pushesBeforePing() throws -> [Push] {
        let reply = try command("PING")
        guard reply == .status("PONG") else { throw HarnessError.malformed("\(label): PING got \(reply)") }
        return takePushes()
    }

    /// Reads until the server closes the connection (end of stream or ECONNRESET). Without `discardingData`, any
    /// byte that arrives first is an error; with it, data is read and thrown away (e.g. a cut-off subscriber's
    /// backlog). Throws `timeout` when the connection stays open.
    func expectClosed(discardingData: Bool = false) throws {
        if !discardingData && (start < buffer.count || !pushes.isEmpty || !replies.isEmpty) {
            throw HarnessError.malformed(
                "\(label): expected the connection to close, but unread: \(describeBytes(buffer[start...])) "
                    + "pushes \(pushes) replies \(replies)")
        }
        buffer.removeAll()
        start = 0
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { return }
            if count > 0 {
                if discardingData { continue }
                throw HarnessError.malformed(
                    "\(label): expected the connection to close, got: \(describeBytes(chunk[0..<count]))")
            }
            switch errno {
            case EINTR: continue
            case ECONNRESET: return
            case EAGAIN, EWOULDBLOCK:
                throw HarnessError.timeout("\(label): connection still open after \(timeout) s")
            default: throw HarnessError.system("\(label): recv", errno)
            }
        }
    }
}
