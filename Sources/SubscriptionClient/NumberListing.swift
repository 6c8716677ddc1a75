/// One line of `LIST [<pattern>] kind` (protocol 1.1): a number, its subscribers and its kind.
public struct NumberListing: Sendable, Equatable {
    /// What kind of number it is.
    public enum Kind: Sendable, Equatable {
        /// A number that keeps nothing: a publication reaches the subscribers of the moment.
        case plain
        /// A number that keeps its latest publication; `revision` is that publication's (0: nothing published yet).
        case retained(revision: Int)
    }

    /// The number.
    public var number: String
    /// How many sessions a message to it would reach now.
    public var subscribers: Int
    /// Plain or retained.
    public var kind: Kind

    /// Makes a listing.
    public init(number: String, subscribers: Int, kind: Kind) {
        self.number = number
        self.subscribers = subscribers
        self.kind = kind
    }

    /// Parses `<number> <subscribers> plain` or `<number> <subscribers> retained <rev>`; nil for anything else.
    init?(line: String) {
        let words = line.utf8.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
            .map { Substring($0) }
        guard words.count >= 3, !words[0].isEmpty, let subscribers = Self.count(words[1]) else { return nil }
        switch (words[2], words.count) {
        case ("plain", 3):
            kind = .plain
        case ("retained", 4):
            guard let revision = Self.count(words[3]) else { return nil }
            kind = .retained(revision: revision)
        default:
            return nil
        }
        self.number = String(words[0])
        self.subscribers = subscribers
    }

    /// A count written in 1 to 18 ASCII digits, or nil.
    private static func count(_ word: Substring) -> Int? {
        guard (1...18).contains(word.utf8.count), word.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(word)
    }
}
