/// A decoder that keeps the bytes it received in an ``InputBuffer`` and drops them once it is finished: the command
/// parser, the NATS parser and the WebSocket frame decoder. How bytes get in is written once, here.
public protocol BufferedDecoder {
    /// The bytes received and not yet consumed.
    var input: InputBuffer { get set }
    /// True once the decoder takes no more bytes: what is appended is dropped.
    var isFinished: Bool { get }
}

extension BufferedDecoder {
    /// Appends bytes received from the peer. Dropped once the decoder is finished.
    @inlinable
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if !isFinished { input.append(bytes) }
    }

    /// Appends bytes received from the peer. Dropped once the decoder is finished.
    @inlinable
    public mutating func append<S: Sequence>(contentsOf bytes: S) where S.Element == UInt8 {
        let copied: Void? = bytes.withContiguousStorageIfAvailable { append(UnsafeRawBufferPointer($0)) }
        if copied == nil { Array(bytes).withUnsafeBytes { append($0) } }
    }

    /// Lets the caller read(2) (or `SSL_read`) straight into the buffer: at least `minimumCapacity` free bytes at the
    /// tail (consumed bytes dropped first, capacity reused), `body` called with them, the count it returns kept
    /// (0...space.count); once the decoder is finished, read and dropped. Returns `body`'s count. If `body` throws,
    /// nothing is kept.
    @inlinable
    @discardableResult
    public mutating func withWritableTail(
        minimumCapacity: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> Int
    ) rethrows -> Int {
        try input.withWritableTail(minimumCapacity: minimumCapacity, commit: !isFinished, body)
    }
}
