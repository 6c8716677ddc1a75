/// Where ``MQTTEncoder`` writes a packet's fields: a byte array, or a counter that only adds up their size. Every
/// packet is written twice through the same code, counted then stored, so its remaining length is known before its
/// first byte is written and the two can never disagree.
protocol MQTTByteSink {
    /// Writes one byte.
    mutating func put(_ byte: UInt8)
    /// Writes `bytes`.
    mutating func put(bytes: some Collection<UInt8>)
}

extension Array: MQTTByteSink where Element == UInt8 {
    mutating func put(_ byte: UInt8) { append(byte) }
    mutating func put(bytes: some Collection<UInt8>) { append(contentsOf: bytes) }
}

/// A sink that counts the bytes written to it.
struct MQTTByteCounter: MQTTByteSink {
    /// The bytes written so far.
    var count = 0

    mutating func put(_ byte: UInt8) { count += 1 }
    mutating func put(bytes: some Collection<UInt8>) { count += bytes.count }
}

extension MQTTByteSink {
    /// A two-byte big-endian integer.
    mutating func put(uint16 value: UInt16) {
        put(UInt8(truncatingIfNeeded: value >> 8))
        put(UInt8(truncatingIfNeeded: value))
    }

    /// A four-byte big-endian integer.
    mutating func put(uint32 value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { put(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    /// A variable byte integer (section 1.5.5), 0 to 268,435,455.
    mutating func put(variableByteInteger value: Int) {
        precondition(
            value >= 0 && value <= MQTTEncoder.maxVariableByteInteger,
            "a variable byte integer is 0 to 268,435,455, got \(value)")
        var rest = value
        repeat {
            let low = UInt8(rest & 0x7F)
            rest >>= 7
            put(rest > 0 ? low | 0x80 : low)
        } while rest > 0
    }

    /// Binary data (section 1.5.6): a two-byte length, then the bytes (at most 65,535).
    mutating func put(binary: some Collection<UInt8>) {
        precondition(binary.count <= 0xFFFF, "binary data and strings hold at most 65,535 bytes, got \(binary.count)")
        put(uint16: UInt16(binary.count))
        put(bytes: binary)
    }

    /// A UTF-8 encoded string (section 1.5.4): a two-byte length, then the UTF-8 (at most 65,535 bytes).
    mutating func put(string: String) {
        put(binary: string.utf8)
    }
}
