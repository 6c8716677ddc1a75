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
            // An array of zeros, not `repeatElement`: a debug build appends that one byte at a time (7 ms per new
            // connection's 64 KiB, the top of the debug test suite's profile).
            buffer.append(contentsOf: [UInt8](repeating: 0, count: needed - buffer.count))
            // Use all the capacity the array allocated, so the next reads need no growth.
            if buffer.capacity > buffer.count {
                buffer.append(contentsOf: [UInt8](repeating: 0, count: buffer.capacity - buffer.count))
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

    /// What ``nextLine(in:from:to:scanned:maxLine:)`` found.
    public enum Line: Equatable, Sendable {
        /// A complete line: its bytes without the LF and a CR right before it, and one past the LF.
        case line(content: Range<Int>, end: Int)
        /// No LF yet: more bytes are needed.
        case incomplete
        /// The line is (or must become) longer than `maxLine` bytes.
        case tooLong
    }

    /// Finds the next line of `buffer[start..<end]` (a line ends in LF; one CR right before it is dropped), scanning
    /// only the bytes after the `scanned` ones known to hold no LF, and updating `scanned` (0 once a line is found). A
    /// line may hold `maxLine` bytes: more are ``Line/tooLong`` as soon as they are buffered without an LF (a CR that
    /// may come right before the LF excepted).
    @inlinable
    public static func nextLine(in buffer: [UInt8], from start: Int, to end: Int, scanned: inout Int, maxLine: Int)
        -> Line
    {
        let scanFrom = start + scanned
        let lf: Int? = buffer.withUnsafeBufferPointer { bytes in
            var index = scanFrom
            // Invariant: scanFrom...end lie in the buffer (end is the parser's write index).
            while index < end {
                if bytes[index] == 0x0A { return index }
                index += 1
            }
            return nil
        }
        guard let lf else {
            scanned = end - start
            // maxLine bytes and a CR may still end well; anything longer cannot.
            if scanned > maxLine + 1 || (scanned == maxLine + 1 && buffer[end - 1] != 0x0D) { return .tooLong }
            return .incomplete
        }
        scanned = 0
        var contentEnd = lf
        if contentEnd > start && buffer[contentEnd - 1] == 0x0D { contentEnd -= 1 }
        if contentEnd - start > maxLine { return .tooLong }
        return .line(content: start..<contentEnd, end: lf + 1)
    }
}
