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

    /// True when two buffers hold the same bytes: 8 at a time (this target has no `memcmp`), the last 8 overlapping
    /// the ones before instead of a loop over the tail.
    @inlinable
    public static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let count = a.count
        guard count == b.count else { return false }
        guard count >= 8 else {
            for index in 0..<count where a[index] != b[index] { return false }
            return true
        }
        var offset = 0
        // Invariant: offset + 8 <= count for both buffers in every load below, so each stays inside them.
        while offset + 8 < count {
            if word(a, offset) != word(b, offset) { return false }
            offset += 8
        }
        return word(a, count - 8) == word(b, count - 8)
    }

    /// The 8 bytes at `offset` (unaligned). Invariant: `offset + 8 <= bytes.count`.
    @inlinable
    static func word(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
        bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
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
        var tail: UInt64 = 0
        if count >= 8 {
            var offset = 0
            // Invariant: offset + 8 <= count in every load, so each stays inside the buffer.
            while offset + 8 < count {
                state = fold(state ^ word(bytes, offset), prime2)
                offset += 8
            }
            // The last 8 bytes, overlapping the word before when the count is not a multiple of 8 (the count is in
            // the state, so names that differ only in length still hash apart).
            tail = word(bytes, count - 8)
        } else {
            for index in 0..<count { tail |= UInt64(bytes[index]) << UInt64(index * 8) }
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
