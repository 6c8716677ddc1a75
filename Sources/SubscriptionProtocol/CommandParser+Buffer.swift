import SubscriptionWire

extension CommandParser: BufferedDecoder {
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
