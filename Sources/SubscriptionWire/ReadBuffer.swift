/// The storage of a stream parser (the server's command parser, the NATS client's frame parser): one growable byte
/// array with a read index (the first byte not consumed) and a write index (one past the last byte received), which
/// the parser keeps as its own stored properties and lends here. Written once for both.
///
/// Memory: consumed bytes are dropped, and the unread ones moved to the front, only when more room is asked for; the
/// array is grown to all the capacity it allocated, so the next reads need no growth; an array grown past
/// ``shrinkThreshold`` for one large message is given back once little of it is in use.
public enum ReadBuffer {
    /// A buffer grown past this (for a large message) is given back once little of it is in use.
    public static let shrinkThreshold = 256 * 1024

    /// Makes at least `minimumCapacity` free bytes after `writeIndex` (``compact(_:readIndex:writeIndex:)`` first),
    /// calls `body` with that space and returns the count `body` says it wrote (0...space.count), which the caller
    /// commits by adding it to `writeIndex` (or drops). If `body` throws, nothing is written.
    @inlinable
    public static func withWritableTail(
        _ buffer: inout [UInt8], readIndex: inout Int, writeIndex: inout Int, minimumCapacity: Int,
        _ body: (UnsafeMutableRawBufferPointer) throws -> Int
    ) rethrows -> Int {
        precondition(minimumCapacity >= 0, "minimumCapacity must not be negative, got \(minimumCapacity)")
        compact(&buffer, readIndex: &readIndex, writeIndex: &writeIndex)
        let needed = writeIndex + minimumCapacity
        if buffer.count > shrinkThreshold && needed <= shrinkThreshold / 2 {
            // A large message is gone: give its storage back, so an idle connection does not pin a MiB.
            buffer = Array(buffer[0..<writeIndex])
        }
        if buffer.count < needed {
            buffer.append(contentsOf: repeatElement(0, count: needed - buffer.count))
            // Use all the capacity the array allocated, so the next reads need no growth.
            if buffer.capacity > buffer.count {
                buffer.append(contentsOf: repeatElement(0, count: buffer.capacity - buffer.count))
            }
        }
        let start = writeIndex
        return try buffer.withUnsafeMutableBytes { storage in
            let space = UnsafeMutableRawBufferPointer(rebasing: storage[start...])
            let count = try body(space)
            precondition(count >= 0 && count <= space.count, "body returned \(count), space was \(space.count)")
            return count
        }
    }

    /// Drops consumed bytes by moving the unread ones to the front; both indexes move with them.
    @inlinable
    public static func compact(_ buffer: inout [UInt8], readIndex: inout Int, writeIndex: inout Int) {
        guard readIndex > 0 else { return }
        let unread = writeIndex - readIndex
        if unread > 0 {
            let from = readIndex
            buffer.withUnsafeMutableBytes { storage in
                // Invariant: from + unread <= storage.count (the unread bytes lie in the buffer); the regions may
                // overlap, which copyMemory allows.
                storage.baseAddress!.copyMemory(from: storage.baseAddress! + from, byteCount: unread)
            }
        }
        readIndex = 0
        writeIndex = unread
    }
}
