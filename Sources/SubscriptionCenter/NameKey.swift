import SubscriptionWire

/// A number, pattern or token as a dictionary key, equal and hashed **byte for byte**.
///
/// Swift's `String ==` treats canonically equivalent spellings as equal (`"café"` precomposed and `"cafe\u{301}"`),
/// but the protocol's names are byte strings: different bytes are different numbers. Every table in the center is
/// keyed by this type. Ordering is by bytes too, so listings sort the same way on every machine.
struct NameKey: Hashable, Comparable, ExpressibleByStringLiteral {
    /// The name's text (a slice when it is a token of a longer name).
    let text: Substring

    init(_ text: String) { self.text = text[...] }

    init(_ text: Substring) { self.text = text }

    init(stringLiteral value: String) { self.text = value[...] }

    /// The name as a String.
    var string: String { String(text) }

    static func == (lhs: NameKey, rhs: NameKey) -> Bool {
        NameBytes.equal(lhs.text, rhs.text)
    }

    static func < (lhs: NameKey, rhs: NameKey) -> Bool {
        lhs.text.utf8.lexicographicallyPrecedes(rhs.text.utf8)
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(NameBytes.hash(text, seed: 0))
    }

    /// The hash the center's tables use (``NameBytes/hash(_:seed:)``): no `Hasher` on the publish path.
    func _rawHashValue(seed: Int) -> Int {
        NameBytes.hash(text, seed: seed)
    }

    /// The dot-separated tokens of a name, as ``Names/tokens(_:)`` splits them.
    static func tokens(of name: String) -> [NameKey] {
        Names.tokens(name).map(NameKey.init)
    }
}
