import SubscriptionWire

/// A number, pattern, group or token as a key of the center's tables: ``ExactName``, equal, hashed and ordered **byte
/// for byte** (``NameBytes``), where Swift's `String ==` treats canonically equivalent spellings as equal (`"café"`
/// precomposed and `"cafe\u{301}"`). Listings sort the same way on every machine.
///
/// A key holds a `String`, never a `Substring`: a token of a longer name is made a String once, when a pattern is
/// added to or looked up in the trie (small strings: no allocation), so the lookup on every publish reads the name's
/// bytes in place.
@usableFromInline typealias NameKey = ExactName

extension ExactName {
    /// The key of a token of a longer name.
    @inlinable init(_ token: Substring) { self.init(String(token)) }

    /// The dot-separated tokens of a name, as ``Names/tokens(_:)`` splits them.
    @inlinable static func tokens(of name: String) -> [NameKey] {
        Names.tokens(name).map(NameKey.init)
    }
}
