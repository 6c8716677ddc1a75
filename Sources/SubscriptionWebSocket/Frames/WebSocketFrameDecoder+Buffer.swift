import SubscriptionWire

extension WebSocketFrameDecoder {
    /// Appends bytes received from the client. Dropped once the decoder is finished.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        withWritableTail(minimumCapacity: bytes.count) { space in
            space.copyMemory(from: bytes)
            return bytes.count
        }
    }

    /// Appends bytes received from the client. Dropped once the decoder is finished.
    public mutating func append<S: Sequence>(contentsOf bytes: S) where S.Element == UInt8 {
        let copied: Void? = bytes.withContiguousStorageIfAvailable { append(UnsafeRawBufferPointer($0)) }
        if copied == nil {
            Array(bytes).withUnsafeBytes { append($0) }
        }
    }

    /// Lets the caller read(2) (or `SSL_read`) straight into the decoder's buffer: makes at least `minimumCapacity`
    /// bytes of free space at the tail (dropping consumed bytes first, reusing capacity), calls body with that space,
    /// and commits the count body returns (0...space.count). Returns body's result. Once the decoder is finished the
    /// bytes are dropped. If body throws, nothing is committed.
    @discardableResult
    public mutating func withWritableTail(
        minimumCapacity: Int,
        _ body: (UnsafeMutableRawBufferPointer) throws -> Int
    ) rethrows -> Int {
        let written = try ReadBuffer.withWritableTail(
            &buffer, readIndex: &readIndex, writeIndex: &writeIndex, minimumCapacity: minimumCapacity, body)
        if case .finished = state { return written }
        writeIndex += written
        return written
    }

    /// Frees the storage when the decoder holds no bytes (an idle connection keeps no read buffer).
    public mutating func releaseStorageIfEmpty() {
        guard readIndex == writeIndex else { return }
        readIndex = 0
        writeIndex = 0
        buffer = []
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
