import Dispatch
import Glibc

/// Reads stdin off the cooperative thread pool (read(2) blocks), as bytes.
enum StandardInput {
    /// Bytes asked of one read(2).
    static let chunkSize = 64 * 1024

    /// All of stdin, to its end.
    static func readAll() async -> [UInt8] {
        var all: [UInt8] = []
        while let chunk = await readChunk() { all += chunk }
        return all
    }

    /// The next bytes of stdin, or nil at its end (or on a read error).
    static func readChunk() async -> [UInt8]? {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var chunk = [UInt8](repeating: 0, count: chunkSize)
                while true {
                    let count = chunk.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else {
                        continuation.resume(returning: nil)
                        return
                    }
                    chunk.removeSubrange(count...)
                    continuation.resume(returning: chunk)
                    return
                }
            }
        }
    }

    /// Splits stdin into lines: LF ends a line and is dropped, and so is a CR right before it. A last line
    /// without LF counts when it is not empty.
    struct LineReader {
        private var pending: [UInt8] = []
        private var ended = false

        /// The next lines (at least one, at most `limit`), or nil when stdin has no more.
        mutating func nextLines(atMost limit: Int) async -> [[UInt8]]? {
            while true {
                var lines: [[UInt8]] = []
                var start = 0
                while lines.count < limit, let lf = pending[start...].firstIndex(of: 0x0A) {
                    var end = lf
                    if end > start && pending[end - 1] == 0x0D { end -= 1 }
                    lines.append(Array(pending[start..<end]))
                    start = lf + 1
                }
                pending.removeSubrange(0..<start)
                if !lines.isEmpty { return lines }
                if ended {
                    guard !pending.isEmpty else { return nil }
                    if pending.last == 0x0D { pending.removeLast() }
                    defer { pending = [] }
                    return [pending]
                }
                if let chunk = await StandardInput.readChunk() {
                    pending += chunk
                } else {
                    ended = true
                }
            }
        }
    }
}
