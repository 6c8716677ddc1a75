import SubscriptionSystem

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
