import SubscriptionWire

extension NATSParser {
    /// Appends bytes received from the server. Dropped once the parse has ended.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if !isFinished { input.append(bytes) }
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
        try input.withWritableTail(minimumCapacity: minimumCapacity, commit: !isFinished, body)
    }
}
