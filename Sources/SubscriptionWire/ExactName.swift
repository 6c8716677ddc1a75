/// A number, group or client name as a dictionary or set key, equal, hashed and ordered **byte for byte** (UTF-8).
///
/// Swift's `String ==` and `String` hashing are canonical equivalence: `"caf\u{E9}"` (precomposed é, NFC) and
/// `"cafe\u{301}"` (e and a combining accent, NFD) are one String key. The protocol compares names as bytes
/// (docs/PROTOCOL.md, Words): they are two different numbers. A `[String: X]` keyed by names would merge
/// them; a `[ExactName: X]` keeps them apart, as the center and the state log do.
public struct ExactName: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The name, exactly as it was given (never normalized).
    public let string: String

    /// The name `string`, compared by its UTF-8 bytes.
    @inlinable
    public init(_ string: String) { self.string = string }

    /// A name written as a literal (in tests, or a fixed name), compared by its UTF-8 bytes.
    @inlinable
    public init(stringLiteral value: String) { self.string = value }

    /// The name as it was given.
    public var description: String { string }

    /// True when the two names have the same UTF-8 bytes; canonically equivalent spellings with different bytes
    /// are different names (unlike `String ==`).
    @inlinable
    public static func == (lhs: ExactName, rhs: ExactName) -> Bool {
        NameBytes.equal(lhs.string, rhs.string)
    }

    /// Byte order of the UTF-8 bytes (a name that is a prefix of another sorts first): the same order on every
    /// machine, whatever its locale or Unicode tables, unlike `String <`.
    @inlinable
    public static func < (lhs: ExactName, rhs: ExactName) -> Bool {
        lhs.string.utf8.lexicographicallyPrecedes(rhs.string.utf8)
    }

    /// Hashes the UTF-8 bytes and their count (``NameBytes/hash(_:seed:)``): equal bytes, equal hashes; canonically
    /// equivalent spellings are not hashed alike, unlike a String's hash.
    @inlinable
    public func hash(into hasher: inout Hasher) {
        hasher.combine(NameBytes.hash(string, seed: 0))
    }

    /// The hash tables use (``NameBytes/hash(_:seed:)`` under the table's seed), without a `Hasher`.
    @inlinable
    public func _rawHashValue(seed: Int) -> Int {
        NameBytes.hash(string, seed: seed)
    }
}
