import SubscriptionWire

extension CommandParser {
    /// Appends bytes received from the peer. Dropped once the parser is finished.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if !isFinished { input.append(bytes) }
    }

    /// Appends bytes received from the peer. Dropped once the parser is finished.
    public mutating func append<S: Sequence>(contentsOf bytes: S) where S.Element == UInt8 {
        let copied: Void? = bytes.withContiguousStorageIfAvailable { append(UnsafeRawBufferPointer($0)) }
        if copied == nil {
            Array(bytes).withUnsafeBytes { append($0) }
        }
    }

    /// Lets the caller read(2) straight into the parser's buffer: makes at least `minimumCapacity` bytes of free
    /// space at the tail (compacting consumed bytes first, reusing capacity), calls body with that space, and
    /// commits the count body returns (0...space.count). Returns body's result. Once the parser is finished the
    /// bytes are dropped. If body throws, nothing is committed.
    @discardableResult
    public mutating func withWritableTail(
        minimumCapacity: Int,
        _ body: (UnsafeMutableRawBufferPointer) throws -> Int
    ) rethrows -> Int {
        try input.withWritableTail(minimumCapacity: minimumCapacity, commit: !isFinished, body)
    }
}

extension CommandParser {
    /// True when the parser holds no bytes (no partial command), so its storage may be exchanged.
    public var isEmpty: Bool { input.readIndex == input.writeIndex }

    /// Swaps the parser's storage with `spare` when the parser holds no bytes; does nothing otherwise.
    ///
    /// A server with many mostly idle connections lends one large read buffer to whichever session reads: the
    /// session takes it before read(2) and gives it back when its commands left nothing behind, so an idle session
    /// holds no read buffer at all. The contents of both arrays are irrelevant (nothing is buffered).
    public mutating func exchangeStorage(with spare: inout [UInt8]) {
        guard input.readIndex == input.writeIndex else { return }
        input.readIndex = 0
        input.writeIndex = 0
        scanned = 0
        swap(&input.bytes, &spare)
    }

    /// Frees the storage when the parser holds no bytes (an idle connection keeps no read buffer).
    public mutating func releaseStorageIfEmpty() {
        guard input.count == 0 else { return }
        scanned = 0
        input.releaseStorageIfEmpty()
    }
}
