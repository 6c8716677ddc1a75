import Foundation
import Glibc

/// Drains one file descriptor (a child's stdout or stderr) on its own thread until EOF, so the pipe never fills,
/// and lets tests wait, with a timeout, for text to appear or read it line by line.
final class OutputCollector: @unchecked Sendable {
    private let condition = NSCondition()
    private var bytes: [UInt8] = []
    private var cursor = 0
    private var finished = false
    private let label: String

    /// Starts draining `fileHandle` (the read end of a pipe); `label` names it in failure messages.
    init(fileHandle: FileHandle, label: String) {
        self.label = label
        let fd = fileHandle.fileDescriptor
        let thread = Thread { [self] in
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                condition.lock()
                if count > 0 {
                    bytes.append(contentsOf: chunk[0..<count])
                } else {
                    finished = true
                }
                condition.broadcast()
                condition.unlock()
                if count <= 0 { break }
            }
            withExtendedLifetime(fileHandle) {}
        }
        thread.name = "collector \(label)"
        thread.start()
    }

    /// Everything read so far, as UTF-8 text (invalid bytes replaced).
    var text: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Everything read so far, as bytes.
    var allBytes: [UInt8] {
        condition.lock()
        defer { condition.unlock() }
        return bytes
    }

    /// Waits until `predicate` over all text read so far returns a value, and returns it; throws on timeout or when
    /// the stream ends first, showing what was read.
    func waitFor<T>(_ what: String, timeout: TimeInterval, _ predicate: (String) -> T?) throws -> T {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            let current = String(decoding: bytes, as: UTF8.self)
            if let value = predicate(current) { return value }
            if finished {
                throw HarnessError.closed("\(label) ended before \(what); it printed:\n\(current)")
            }
            if !condition.wait(until: deadline) {
                throw HarnessError.timeout("\(label): no \(what) within \(timeout) s; it printed:\n\(current)")
            }
        }
    }

    /// Waits until the text read so far contains `needle`.
    func waitFor(substring needle: String, timeout: TimeInterval) throws {
        _ = try waitFor("'\(needle)'", timeout: timeout) { $0.contains(needle) ? true : nil }
    }

    /// The next unread line (without its LF); throws on timeout or when the stream ends without a full line.
    func readLine(timeout: TimeInterval) throws -> [UInt8] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let newline = bytes[cursor...].firstIndex(of: 0x0A) {
                let line = Array(bytes[cursor..<newline])
                cursor = newline + 1
                return line
            }
            let rest = describeBytes(bytes[cursor...])
            if finished { throw HarnessError.closed("\(label) ended with no further full line (rest: \(rest))") }
            if !condition.wait(until: deadline) {
                throw HarnessError.timeout("\(label): no further line within \(timeout) s (unread: \(rest))")
            }
        }
    }

    /// The next `count` unread bytes; throws on timeout or when the stream ends first.
    func readBytes(_ count: Int, timeout: TimeInterval) throws -> [UInt8] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while bytes.count - cursor < count {
            let have = bytes.count - cursor
            if finished { throw HarnessError.closed("\(label) ended after \(have) of \(count) bytes") }
            if !condition.wait(until: deadline) {
                throw HarnessError.timeout("\(label): only \(have) of \(count) bytes within \(timeout) s")
            }
        }
        let result = Array(bytes[cursor..<cursor + count])
        cursor += count
        return result
    }

    /// Waits until the stream ends (the writer closed it, e.g. the process exited); returns false on timeout.
    @discardableResult
    func waitForEnd(timeout: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !finished {
            if !condition.wait(until: deadline) { return false }
        }
        return true
    }
}
