import SubscriptionSystem
import SubscriptionWebSocket

#if canImport(Glibc)
    import Glibc
#endif

/// The system calls of a session's output, at the edge: ``OutputQueue`` keeps what is queued and what was written as
/// a plain value (it says what to write next and is told what went out, swift-nio's `PendingWritesManager`); these
/// loops make the writes, `writev(2)` on a plain socket and `SSL_write` through TLS, until the socket would block or
/// everything is out.
enum OutputWriter {
    /// Writes as much of `output` as the socket `fd` takes, up to `maxVectors` iovecs per writev(2), small chunks
    /// gathered into `scratch`. Returns the bytes written in this call.
    static func write(
        _ output: inout OutputQueue, to fd: Int32, vectors: UnsafeMutablePointer<iovec>, maxVectors: Int,
        scratch: UnsafeMutableRawBufferPointer
    ) throws(SystemCallError) -> Int {
        var total = 0
        while !output.isEmpty {
            let (count, offered) = output.nextVectors(vectors, maxVectors: maxVectors, scratch: scratch)
            guard case .processed(let written) = try Syscall.writev(fd, vectors, count) else {
                output.socketFull()
                break
            }
            total += written
            output.wrote(written, of: offered)
            // A short write means the socket buffer is full: wait for the write source instead of asking again.
            if written < offered { break }
        }
        return total
    }

    /// Writes as much of `output` as the TLS session takes: small chunks copied together into `scratch` (at least
    /// ``OutputQueue/tlsGatherLimit`` bytes), large ones one at a time. A write that blocked is retried first, with the
    /// same bytes (``TLSProgress/pendingWriteLength``), as OpenSSL requires. Returns the bytes written in this call.
    static func write(
        _ output: inout OutputQueue, through stream: TLSStream, scratch: UnsafeMutableRawBufferPointer
    ) throws(SystemCallError) -> Int {
        var total = 0
        while !output.isEmpty {
            let block = output.nextBlock(repeating: stream.progress.pendingWriteLength, scratch: scratch)
            guard case .processed(let written) = try stream.write(block) else {
                output.socketFull()
                break
            }
            total += written
            output.wrote(written, of: written)
        }
        return total
    }
}

// MARK: Through a WebSocket

extension OutputWriter {
    /// Writes as much of `output` as the socket `fd` takes, cut into WebSocket frames by `framing`: a frame's header
    /// in the first iovec of a writev(2), the queue's iovecs (as for a plain socket) after it, cut where the frame
    /// ends; raw segments (control frames, the upgrade's response) as they are. Returns the bytes written, headers
    /// included.
    static func write(
        _ output: inout OutputQueue, framedBy framing: inout WebSocketStreamFraming, to fd: Int32,
        vectors: UnsafeMutablePointer<iovec>, maxVectors: Int, scratch: UnsafeMutableRawBufferPointer
    ) throws(SystemCallError) -> Int {
        var total = 0
        while true {
            let next = framing.nextWrite(queued: output.pendingBytes)
            guard next.headerCount + next.streamLimit > 0 else { break }
            var offered = 0
            let result = try framing.withHeader { header throws(SystemCallError) -> IOResult in
                var first = 0
                if !header.isEmpty {
                    vectors[0] = iovec(
                        iov_base: UnsafeMutableRawPointer(mutating: header.baseAddress), iov_len: header.count)
                    first = 1
                }
                var count = 0
                if next.streamLimit > 0 {
                    (count, offered) = output.nextVectors(
                        vectors + first, maxVectors: maxVectors - first, scratch: scratch)
                    (count, offered) = cut(vectors + first, count: count, at: next.streamLimit)
                }
                return try Syscall.writev(fd, vectors, first + count)
            }
            guard case .processed(let written) = result else {
                output.socketFull()
                break
            }
            total += written
            output.wrote(framing.wrote(written, of: next), of: offered)
            // A short write means the socket buffer is full: wait for the write source instead of asking again.
            if written < next.headerCount + offered { break }
        }
        return total
    }

    /// Writes as much of `output` as the TLS session takes, cut into WebSocket frames by `framing`: a frame's header
    /// in its own `SSL_write` (a frame spans everything queued when it started, so this is one small write per
    /// flush, not per message), then blocks as on a TLS connection, never past the frame's end. A write that
    /// blocked is retried first with the same bytes, as OpenSSL requires: the framing keeps the header or frame it
    /// started. Returns the bytes written, headers included.
    static func write(
        _ output: inout OutputQueue, framedBy framing: inout WebSocketStreamFraming, through stream: TLSStream,
        scratch: UnsafeMutableRawBufferPointer
    ) throws(SystemCallError) -> Int {
        var total = 0
        while true {
            let next = framing.nextWrite(queued: output.pendingBytes)
            guard next.headerCount + next.streamLimit > 0 else { break }
            let block =
                next.headerCount > 0
                ? nil
                : output.nextBlock(
                    repeating: stream.progress.pendingWriteLength, limit: next.streamLimit, scratch: scratch)
            let result: IOResult =
                if let block {
                    try stream.write(block)
                } else {
                    try framing.withHeader { header throws(SystemCallError) in try stream.write(header) }
                }
            guard case .processed(let written) = result else {
                output.socketFull()
                break
            }
            total += written
            // A header write took header bytes only: the framing counts no stream bytes for it.
            let streamBytes = framing.wrote(written, of: next)
            if block != nil { output.wrote(streamBytes, of: streamBytes) }
        }
        return total
    }

    /// Cuts the `count` iovecs at `vectors` so that they hold at most `limit` bytes: returns how many are left and
    /// their bytes.
    private static func cut(_ vectors: UnsafeMutablePointer<iovec>, count: Int, at limit: Int) -> (Int, Int) {
        var bytes = 0
        for index in 0..<count {
            let length = vectors[index].iov_len
            if bytes + length >= limit {
                vectors[index].iov_len = limit - bytes
                return (index + 1, limit)
            }
            bytes += length
        }
        return (count, bytes)
    }
}
