/// Byte-exact equality and hashing of names, written once for every table keyed by a name (the center's `NameKey`,
/// ``ExactName``): the protocol's names are byte strings, so canonically equivalent spellings with different bytes are
/// different names (unlike `String ==`).
///
/// Both run on every publish (the number's lookup), so both read a String's bytes in place (a `Substring`, or
/// `withUTF8`, costs about 30 ns more per call), and the hash is a seeded
/// multiply-and-fold over 8-byte words (wyhash's `mum` step) instead of the standard library's SipHash, which costs
/// about 30 ns more per lookup of a short name.
///
/// The seed comes from the table (`Dictionary` and `Set` pass one derived from the process's random hashing seed),
/// so which names collide is not known outside the process, as with Go's runtime maps; a table of names is also
/// bounded by `max_numbers` and `max_subscriptions`.
public enum NameBytes {
    /// True when `lhs` and `rhs` have the same UTF-8 bytes.
    @inlinable
    public static func equal(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.utf8
        let right = rhs.utf8
        guard left.count == right.count else { return false }
        let compared = left.withContiguousStorageIfAvailable { a in
            right.withContiguousStorageIfAvailable { b in equal(UnsafeRawBufferPointer(a), UnsafeRawBufferPointer(b)) }
        }
        if let compared, let equal = compared { return equal }
        return left.elementsEqual(right)
    }

    /// True when two buffers of the same count hold the same bytes (8 at a time: this target has no `memcmp`).
    @inlinable
    public static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let count = a.count
        guard count == b.count else { return false }
        var offset = 0
        while offset + 8 <= count {
            // Invariant: offset + 8 <= count for both buffers, so both unaligned loads stay inside them.
            if a.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                != b.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            {
                return false
            }
            offset += 8
        }
        while offset < count {
            if a[offset] != b[offset] { return false }
            offset += 1
        }
        return true
    }

    /// A hash of `text`'s UTF-8 bytes and their count under `seed`: equal bytes, equal hashes; another seed, other
    /// collisions.
    @inlinable
    public static func hash(_ text: String, seed: Int) -> Int {
        if let hashed = text.utf8.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0), seed: seed) }) {
            return hashed
        }
        return Array(text.utf8).withUnsafeBytes { hash($0, seed: seed) }
    }

    /// ``hash(_:seed:)`` of raw bytes (those of a name not yet made a `String`).
    @inlinable
    public static func hash(_ bytes: UnsafeRawBufferPointer, seed: Int) -> Int {
        let count = bytes.count
        var state = UInt64(UInt(bitPattern: seed)) ^ fold(UInt64(count) ^ prime0, prime1)
        var offset = 0
        while offset + 8 <= count {
            // Invariant: offset + 8 <= count, so the unaligned 8-byte load stays inside the buffer.
            state = fold(state ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self), prime2)
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < count {
            tail |= UInt64(bytes[offset]) << shift
            shift += 8
            offset += 1
        }
        return Int(truncatingIfNeeded: fold(fold(state ^ tail, prime3), prime1))
    }

    /// The high and low halves of the 128-bit product, folded together.
    @inlinable
    static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }

    @usableFromInline static let prime0: UInt64 = 0xa076_1d64_78bd_642f
    @usableFromInline static let prime1: UInt64 = 0xe703_7ed1_a0b4_28db
    @usableFromInline static let prime2: UInt64 = 0x8ebc_6af0_9c88_c6e3
    @usableFromInline static let prime3: UInt64 = 0x5899_65cc_7537_4cc3
}
