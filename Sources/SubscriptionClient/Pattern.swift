/// A subscription pattern as the client matches it locally, to route `MSG` pushes to the right
/// ``Subscription`` (PROTOCOL.md, "Words": `*` matches one token, a last `>` one or more).
///
/// Names are byte strings: tokens are split on the byte `.` and compared byte for byte, never as Swift Characters
/// (which would glue a dot to a following combining mark and call canonically equivalent spellings equal).
struct Pattern: Sendable, Equatable {
    /// The pattern as it was sent in `SUB`.
    let text: String
    private let tokens: [[UInt8]]
    /// True when no token is a wildcard, so `GONE <text>` ends this pattern.
    let isExact: Bool

    private static let star = [UInt8(ascii: "*")]
    private static let rest = [UInt8(ascii: ">")]

    init(_ text: String) {
        self.text = text
        self.tokens = Self.tokens(of: text)
        self.isExact = !tokens.contains { $0 == Self.star || $0 == Self.rest }
    }

    /// Whether `number` is this exact pattern, byte for byte.
    func isExactly(_ number: String) -> Bool {
        isExact && number.utf8.elementsEqual(text.utf8)
    }

    /// Whether a message published to `number` matches this pattern.
    func matches(_ number: String) -> Bool {
        if isExact { return isExactly(number) }
        var numberTokens = Self.tokens(of: number)[...]
        for (index, token) in tokens.enumerated() {
            if token == Self.rest && index == tokens.count - 1 { return !numberTokens.isEmpty }
            guard let next = numberTokens.popFirst() else { return false }
            if token != Self.star && token != next { return false }
        }
        return numberTokens.isEmpty
    }

    private static func tokens(of name: String) -> [[UInt8]] {
        name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map(Array.init)
    }
}
