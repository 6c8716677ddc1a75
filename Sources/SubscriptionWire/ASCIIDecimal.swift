/// An unsigned decimal number as the wire spells it: ASCII digits only (no sign, no space, no `_`), at least one, at
/// most a given count. The one reader and writer of such numbers for the NATS client, the cluster bridge and the
/// client library (the command parser has its own reader, which reports why a size is refused, and the publication
/// encoder its own writer, into its frame's storage).
public enum ASCIIDecimal {
    /// The most digits a `UInt64` always holds: every 19-digit number is below 10^19 < 2^64.
    public static let maxDigits = 19

    /// The value of `digits`, 1 to `maxDigits` ASCII digits (a larger `maxDigits` counts as ``maxDigits``, so the
    /// value cannot overflow); nil for none, for more, or for any other byte.
    @inlinable
    public static func value(of digits: some Collection<UInt8>, maxDigits: Int = ASCIIDecimal.maxDigits) -> UInt64? {
        let limit = min(maxDigits, Self.maxDigits)
        var count = 0
        var value: UInt64 = 0
        for byte in digits {
            count += 1
            guard count <= limit, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            // Unchecked: at most 19 digits, below 10^19 < 2^64, so neither wraps (ASCIIDecimalTests: 2^64's 20
            // digits refused, every power of ten's neighbours read back).
            value = value &* 10 &+ UInt64(byte &- UInt8(ascii: "0"))
        }
        return count > 0 ? value : nil
    }

    /// Appends `value`'s digits to `bytes`, no `String` made (sizes, ids and counters on every message written).
    @inlinable
    public static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        // Unsafe bytes of the 20-byte tuple, filled from its end: a UInt64 has at most 20 digits (2^64 - 1 is
        // 18446744073709551615), so `19 - count` never goes below 0 (ASCIIDecimalTests writes UInt64.max).
        withUnsafeMutableBytes(of: &digits) { space in
            repeat {
                space[19 - count] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value % 10)
                value /= 10
                count += 1
            } while value > 0
            bytes.append(contentsOf: space[(20 - count)...])
        }
    }
}
