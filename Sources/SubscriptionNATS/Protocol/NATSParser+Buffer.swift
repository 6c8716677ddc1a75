extension NATSParser {
    /// Appends bytes received from the server. Dropped once the parse has ended.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        withWritableTail(minimumCapacity: bytes.count) { space in
            space.copyMemory(from: bytes)
            return bytes.count
        }
    }

    /// Appends bytes received from the server. Dropped once the parse has ended.
    public mutating func append<S: Sequence>(contentsOf bytes: S) where S.Element == UInt8 {
        let copied: Void? = bytes.withContiguousStorageIfAvailable { append(UnsafeRawBufferPointer($0)) }
        if copied == nil {
            Array(bytes).withUnsafeBytes { append($0) }
        }
    }

    /// Lets the caller read(2) straight into the buffer: makes at least `minimumCapacity` free bytes at the tail
    /// (dropping consumed bytes first), calls `body` with that space and commits the count it returns
    /// (0...space.count). Once the parse has ended the bytes are dropped.
    @discardableResult
    public mutating func withWritableTail(
        minimumCapacity: Int,
        _ body: (UnsafeMutableRawBufferPointer) throws -> Int
    ) rethrows -> Int {
        precondition(minimumCapacity >= 0, "minimumCapacity must not be negative, got \(minimumCapacity)")
        compact()
        let needed = writeIndex + minimumCapacity
        if buffer.count > Self.shrinkThreshold && needed <= Self.shrinkThreshold / 2 {
            // A large message is gone: give its storage back.
            buffer = Array(buffer[0..<writeIndex])
        }
        if buffer.count < needed {
            buffer.append(contentsOf: repeatElement(0, count: needed - buffer.count))
            if buffer.capacity > buffer.count {
                buffer.append(contentsOf: repeatElement(0, count: buffer.capacity - buffer.count))
            }
        }
        let start = writeIndex
        let written = try buffer.withUnsafeMutableBytes { storage in
            let space = UnsafeMutableRawBufferPointer(rebasing: storage[start...])
            let count = try body(space)
            precondition(count >= 0 && count <= space.count, "body returned \(count), space was \(space.count)")
            return count
        }
        if case .finished = state { return written }
        writeIndex += written
        return written
    }

    /// A buffer grown past this (for a large message) is given back once little of it is in use.
    static var shrinkThreshold: Int { 256 * 1024 }

    /// Drops consumed bytes by moving the unread ones to the front.
    mutating func compact() {
        guard readIndex > 0 else { return }
        let unread = writeIndex - readIndex
        if unread > 0 {
            let from = readIndex
            buffer.withUnsafeMutableBytes { storage in
                // The regions may overlap; copyMemory allows that.
                storage.baseAddress!.copyMemory(from: storage.baseAddress! + from, byteCount: unread)
            }
        }
        readIndex = 0
        writeIndex = unread
    }
}
