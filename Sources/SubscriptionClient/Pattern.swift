import SubscriptionWire

/// A subscription pattern as the client holds it, to route `MSG` pushes to the right ``Subscription``. Matching is
/// SubscriptionWire's ``Names/matches(pattern:number:)``: byte for byte, token by token.
struct Pattern: Sendable, Equatable {
    /// The pattern as it was sent in `SUB`.
    let text: String
    /// True when no token is a wildcard, so `GONE <text>` ends this pattern.
    let isExact: Bool

    /// A pattern that ``Command/sub(_:from:)`` accepted (an invalid one is taken as exact).
    init(_ text: String) {
        self.text = text
        self.isExact = (try? Names.checkPattern(text)) != true
    }

    /// Whether `text` is this pattern's text, byte for byte.
    func isSpelled(_ text: String) -> Bool {
        self.text.utf8.elementsEqual(text.utf8)
    }

    /// Whether `number` is this exact pattern, byte for byte.
    func isExactly(_ number: String) -> Bool {
        isExact && number.utf8.elementsEqual(text.utf8)
    }

    /// Whether a message published to `number` matches this pattern.
    func matches(_ number: String) -> Bool {
        Names.matches(pattern: text, number: number)
    }
}
