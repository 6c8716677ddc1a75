/// A subscription pattern as the client matches it locally, to route `MSG` pushes to the right
/// ``Subscription`` (PROTOCOL.md, "Words": `*` matches one token, a last `>` one or more).
struct Pattern: Sendable, Equatable {
    /// The pattern as it was sent in `SUB`.
    let text: String
    private let tokens: [Substring]
    /// True when no token is a wildcard, so `GONE <text>` ends this pattern.
    let isExact: Bool

    init(_ text: String) {
        self.text = text
        self.tokens = text.split(separator: ".", omittingEmptySubsequences: false)
        self.isExact = !tokens.contains { $0 == "*" || $0 == ">" }
    }

    /// Whether a message published to `number` matches this pattern.
    func matches(_ number: String) -> Bool {
        if isExact { return number == text }
        var numberTokens = number.split(separator: ".", omittingEmptySubsequences: false)[...]
        for (index, token) in tokens.enumerated() {
            if token == ">" && index == tokens.count - 1 { return !numberTokens.isEmpty }
            guard let next = numberTokens.popFirst() else { return false }
            if token != "*" && token != next { return false }
        }
        return numberTokens.isEmpty
    }
}
