/// The `MSG` push, encoded once per published message and shared by every receiver.
extension ReplyEncoder {
    /// Exact byte size of `MSG <number> <n>[ from=<from>]\n<payload>\n`.
    public static func messageFrameSize(number: String, payloadCount: Int, from: String?) -> Int {
        var size = 4 + number.utf8.count + 1 + Decimal.byteCount(payloadCount) + 1 + payloadCount + 1
        if let from { size += 6 + from.utf8.count }
        return size
    }

    /// Writes that frame at `destination` (which has messageFrameSize bytes); returns the bytes written.
    public static func writeMessageFrame(
        number: String,
        payload: UnsafeRawBufferPointer,
        from: String?,
        to destination: UnsafeMutableRawPointer
    ) -> Int {
        var offset = writeStatic("MSG ", to: destination)
        offset += writeUTF8(number, to: destination + offset)
        destination.storeBytes(of: ASCII.space, toByteOffset: offset, as: UInt8.self)
        offset += 1
        offset += Decimal.write(payload.count, to: destination + offset)
        if let from {
            offset += writeStatic(" from=", to: destination + offset)
            offset += writeUTF8(from, to: destination + offset)
        }
        destination.storeBytes(of: ASCII.lf, toByteOffset: offset, as: UInt8.self)
        offset += 1
        if let base = payload.baseAddress, !payload.isEmpty {
            (destination + offset).copyMemory(from: base, byteCount: payload.count)
            offset += payload.count
        }
        destination.storeBytes(of: ASCII.lf, toByteOffset: offset, as: UInt8.self)
        return offset + 1
    }

    /// The whole `MSG` frame as a new array of exactly ``messageFrameSize(number:payloadCount:from:)`` bytes.
    public static func messageFrame(number: String, payload: UnsafeRawBufferPointer, from: String?) -> [UInt8] {
        let size = messageFrameSize(number: number, payloadCount: payload.count, from: from)
        return [UInt8](unsafeUninitializedCapacity: size) { storage, initialized in
            initialized = writeMessageFrame(
                number: number, payload: payload, from: from, to: UnsafeMutableRawPointer(storage.baseAddress!)
            )
            precondition(initialized == size, "MSG frame is \(initialized) bytes, expected \(size)")
        }
    }

    private static func writeStatic(_ text: StaticString, to destination: UnsafeMutableRawPointer) -> Int {
        destination.copyMemory(from: text.utf8Start, byteCount: text.utf8CodeUnitCount)
        return text.utf8CodeUnitCount
    }

    private static func writeUTF8(_ text: String, to destination: UnsafeMutableRawPointer) -> Int {
        var text = text
        return text.withUTF8 { bytes in
            if let base = bytes.baseAddress { destination.copyMemory(from: base, byteCount: bytes.count) }
            return bytes.count
        }
    }
}
