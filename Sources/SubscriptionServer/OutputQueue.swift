#if canImport(Glibc)
import Glibc
#endif

/// The ordered output of one connection: shared message frames and the session's own reply blocks, written with
/// one writev(2) per turn (swift-nio `PendingWritesManager`).
///
/// Replies and pushes keep the order in which they were queued, so a reply (a list included) is never split by a
/// push. Arrays are reused (`removeAll(keepingCapacity:)`), so a steady stream costs no allocation here.
struct OutputQueue {
    /// Size of a reply block; replies in a row share one block.
    static let replyBlockSize = 4096

    private var chunks: [Frame] = []
    private var head = 0
    private var headOffset = 0

    /// Bytes queued and not yet written.
    private(set) var pendingBytes = 0

    /// True when nothing is waiting.
    var isEmpty: Bool { pendingBytes == 0 }

    /// Queues a shared frame (a reference, not a copy).
    mutating func append(frame: Frame) {
        chunks.append(frame)
        pendingBytes += frame.count
    }

    /// Copies reply bytes to the tail, filling the last reply block before starting a new one.
    mutating func append(replyBytes bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        pendingBytes += bytes.count
        var rest = bytes
        if let last = chunks.last, head < chunks.count, last.isReplyBlock {
            rest = UnsafeRawBufferPointer(rebasing: rest[last.append(rest)...])
        }
        while !rest.isEmpty {
            let block = Frame.make(capacity: max(Self.replyBlockSize, rest.count), isReplyBlock: true)
            rest = UnsafeRawBufferPointer(rebasing: rest[block.append(rest)...])
            chunks.append(block)
        }
    }

    /// Drops everything queued (the connection is going away).
    mutating func removeAll() {
        chunks.removeAll(keepingCapacity: false)
        head = 0
        headOffset = 0
        pendingBytes = 0
    }

    /// Writes as much as the socket takes, `maxVectors` chunks per writev, until it would block or all is out.
    /// Returns the bytes written in this call.
    mutating func write(
        to fd: Int32,
        vectors: UnsafeMutablePointer<iovec>,
        maxVectors: Int
    ) throws(SystemCallError) -> Int {
        var total = 0
        while head < chunks.count {
            var n = 0
            var offered = 0
            var index = head
            var offset = headOffset
            while index < chunks.count && n < maxVectors {
                let chunk = chunks[index]
                let length = chunk.count - offset
                vectors[n] = iovec(iov_base: UnsafeMutableRawPointer(chunk.base + offset), iov_len: length)
                offered += length
                n += 1
                index += 1
                offset = 0
            }
            guard case .processed(let written) = try Syscall.writev(fd, vectors, n) else { break }
            total += written
            consume(written)
            // A short write means the socket buffer is full: wait for the write source instead of asking again.
            if written < offered { break }
        }
        return total
    }

    /// Advances past `written` bytes, releasing fully written chunks.
    private mutating func consume(_ written: Int) {
        var left = written
        pendingBytes -= written
        while left > 0 {
            let remaining = chunks[head].count - headOffset
            if left >= remaining {
                left -= remaining
                head += 1
                headOffset = 0
            } else {
                headOffset += left
                left = 0
            }
        }
        if head == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 && head * 2 >= chunks.count {
            chunks.removeFirst(head)
            head = 0
        }
    }
}
