import Foundation

extension NATSServerProcess {
    /// One NATS request over a new connection to this server, in the client protocol as any client speaks it
    /// (`CONNECT`, `SUB` of an inbox, `PUB` with that reply subject), without subd's NATS client: the reply's payload.
    /// For a test that sets up JetStream before any subd node runs (a stream made with a configuration subd would not
    /// make). Throws when no reply comes within `timeout` seconds.
    public func request(_ subject: String, _ payload: String, timeout: TimeInterval = 5) throws -> String {
        let fd = try connectedLoopbackSocket(port: port, what: "nats-server at \(address)")
        defer { close(fd) }
        var wait = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        let inbox = "_INBOX.test.\(UInt32.random(in: 0...UInt32.max))"
        let body = Array(payload.utf8)
        let text =
            "CONNECT {\"verbose\":false,\"pedantic\":false}\r\nSUB \(inbox) 1\r\n"
            + "PUB \(subject) \(inbox) \(body.count)\r\n\(payload)\r\n"
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
            throw HarnessFailure("send to nats-server at \(self.address)")
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Date() + timeout
        while Date() < deadline {
            if let reply = Self.message(in: received) { return reply }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { break }
            if count > 0 { received += buffer[0..<count] }
        }
        let got = String(decoding: received, as: UTF8.self)
        throw HarnessFailure("no reply to \(subject) from \(self.address): \(got)")
    }

    /// The payload of the first `MSG` in `bytes`, once all of it is there (the server's `INFO`, `PING`s and `+OK`s
    /// before it are skipped).
    private static func message(in bytes: [UInt8]) -> String? {
        var start = 0
        while let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: bytes[start..<end], as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            start = end + 1
            guard line.hasPrefix("MSG "), let size = line.split(separator: " ").last.flatMap({ Int($0) }) else {
                continue
            }
            guard bytes.count >= start + size else { return nil }
            return String(decoding: bytes[start..<start + size], as: UTF8.self)
        }
        return nil
    }
}
