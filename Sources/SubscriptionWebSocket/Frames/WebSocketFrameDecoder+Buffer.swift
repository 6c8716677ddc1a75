import SubscriptionWire

extension WebSocketFrameDecoder {
    /// Appends bytes received from the client. Dropped once the decoder is finished.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if !isFinished { input.append(bytes) }
    }

    /// Appends bytes received from the client. Dropped once the decoder is finished.
    public mutating func append<S: Sequence>(contentsOf bytes: S) where S.Element == UInt8 {
        Array(bytes).withUnsafeBytes { append($0) }
    }

    /// Lets the caller read(2) (or `SSL_read`) straight into the decoder's buffer: at least `minimumCapacity` free
    /// bytes at the tail, `body` called with them, the count it returns kept (0...space.count); once the decoder is
    /// finished, read and dropped. Returns `body`'s count. If `body` throws, nothing is kept.
    @discardableResult
    public mutating func withWritableTail(
        minimumCapacity: Int,
        _ body: (UnsafeMutableRawBufferPointer) throws -> Int
    ) rethrows -> Int {
        try input.withWritableTail(minimumCapacity: minimumCapacity, commit: !isFinished, body)
    }

    /// Frees the storage when the decoder holds no bytes (an idle connection keeps no read buffer).
    public mutating func releaseStorageIfEmpty() {
        input.releaseStorageIfEmpty()
    }

    /// XORs `buffer[start..<start + count]` with the masking key `mask` (its first byte in the lowest bits), the key
    /// standing at payload offset `offset`: unmasks in place (section 5.3).
    mutating func unmask(start: Int, count: Int, mask: UInt32, offset: Int) {
        guard count > 0 else { return }
        // The key rotated so that its byte for payload offset `offset` comes first.
        let shift = UInt32((offset & 3) * 8)
        let key = shift == 0 ? mask : (mask >> shift) | (mask << (32 - shift))
        buffer.withUnsafeMutableBytes { storage in
            // Invariant: start + count <= writeIndex <= storage.count (the caller unmasks received bytes).
            let bytes = UnsafeMutableRawBufferPointer(rebasing: storage[start..<(start + count)])
            let wide = UInt64(key) | UInt64(key) << 32
            var index = 0
            while index + 8 <= count {
                let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                bytes.storeBytes(of: word ^ wide.littleEndian, toByteOffset: index, as: UInt64.self)
                index += 8
            }
            var rest = key
            while index < count {
                bytes[index] ^= UInt8(truncatingIfNeeded: rest)
                rest = (rest >> 8) | (rest << 24)
                index += 1
            }
        }
    }
}
