/// Writes integers as ASCII decimal digits without making a String.
enum Decimal {
    /// How many digits `value` has in decimal (1 for 0).
    static func digitCount(_ value: UInt) -> Int {
        var count = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            count += 1
        }
        return count
    }

    /// How many bytes `value` takes in decimal, a minus sign included.
    static func byteCount(_ value: Int) -> Int {
        digitCount(value.magnitude) + (value < 0 ? 1 : 0)
    }

    /// Writes `value` at `destination` (which has `byteCount(value)` bytes); returns the bytes written.
    static func write(_ value: Int, to destination: UnsafeMutableRawPointer) -> Int {
        var offset = 0
        if value < 0 {
            destination.storeBytes(of: UInt8(ascii: "-"), as: UInt8.self)
            offset = 1
        }
        var rest = value.magnitude
        let digits = digitCount(rest)
        var index = offset + digits - 1
        repeat {
            destination.storeBytes(of: ASCII.zero + UInt8(rest % 10), toByteOffset: index, as: UInt8.self)
            rest /= 10
            index -= 1
        } while rest > 0
        return offset + digits
    }

    /// Appends `value` in decimal to `buffer`.
    static func append(_ value: Int, into buffer: inout [UInt8]) {
        // 20 bytes hold any Int with its sign.
        withUnsafeTemporaryAllocation(byteCount: 20, alignment: 1) { scratch in
            let count = write(value, to: scratch.baseAddress!)
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[..<count]))
        }
    }
}
