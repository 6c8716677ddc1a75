/// The bytes a decoder has received and not yet consumed, in one growable array (``ReadBuffer``'s rules: consumed
/// bytes dropped before it grows, a large buffer given back once little of it is used). The decoder reads
/// `bytes[readIndex..<writeIndex]` and moves `readIndex` past what it consumed; data arrives through ``append(_:)`` or
/// straight from read(2) through ``withWritableTail(minimumCapacity:commit:_:)``.
public struct InputBuffer: Sendable {
    /// The storage; the received bytes are `bytes[readIndex..<writeIndex]`.
    public var bytes: [UInt8] = []
    /// Where the unconsumed bytes start.
    public var readIndex = 0
    /// Where the next received byte goes.
    public var writeIndex = 0

    /// An empty buffer with no storage.
    public init() {}

    /// The bytes received and not consumed.
    @inlinable public var count: Int { writeIndex - readIndex }

    /// The bytes of storage held (at least ``count``).
    @inlinable public var capacity: Int { bytes.count }

    /// Appends a copy of `source`.
    @inlinable
    public mutating func append(_ source: UnsafeRawBufferPointer) {
        guard !source.isEmpty else { return }
        withWritableTail(minimumCapacity: source.count) { space in
            space.copyMemory(from: source)
            return source.count
        }
    }

    /// Makes at least `minimumCapacity` free bytes at the tail, calls `body` with them, and, with `commit`, keeps the
    /// count `body` returns (0...space.count); without it the bytes are read and dropped (a finished decoder). Returns
    /// `body`'s count. If `body` throws, nothing is kept.
    @inlinable
    @discardableResult
    public mutating func withWritableTail(
        minimumCapacity: Int, commit: Bool = true, _ body: (UnsafeMutableRawBufferPointer) throws -> Int
    ) rethrows -> Int {
        let written = try ReadBuffer.withWritableTail(
            &bytes, readIndex: &readIndex, writeIndex: &writeIndex, minimumCapacity: minimumCapacity, body)
        if commit { writeIndex += written }
        return written
    }

    /// Frees the storage when nothing is held (an idle connection keeps no read buffer).
    public mutating func releaseStorageIfEmpty() {
        guard readIndex == writeIndex else { return }
        readIndex = 0
        writeIndex = 0
        bytes = []
    }
}
