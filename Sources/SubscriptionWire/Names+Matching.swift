extension Names {
    /// Whether `pattern` matches `number`, token by token: `*` matches exactly one token, `>` as the last token
    /// matches one or more tokens (so `>` alone matches every number), any other token must be equal byte for byte.
    ///
    /// Both names are expected to be valid (see ``checkPattern(_:)`` and ``checkNumber(_:)``); it allocates nothing.
    /// A number whose first token is `$SYS` (the daemon's own) is matched only by a pattern whose first token is
    /// literal: `>` and `*.stats` do not match `$SYS.stats` (protocol 1.1, "System notifications").
    public static func matches(pattern: String, number: String) -> Bool {
        if isSystem(number) && firstTokenIsWildcard(pattern) { return false }
        var patternRest: Substring.UTF8View? = pattern.utf8[...]
        var numberRest: Substring.UTF8View? = number.utf8[...]
        while let patternToken = nextToken(&patternRest) {
            guard let numberToken = nextToken(&numberRest) else { return false }
            if patternToken.count == 1 {
                let byte = patternToken[patternToken.startIndex]
                if byte == UInt8(ascii: ">") && patternRest == nil { return true }
                if byte == UInt8(ascii: "*") { continue }
            }
            if !patternToken.elementsEqual(numberToken) { return false }
        }
        return numberRest == nil
    }

    /// True for a number or pattern of the daemon's own namespace: its first token is `$SYS`. Other names that
    /// start with `$` are ordinary (protocol 1.0 allows them).
    ///
    /// It runs on every `PUB` and `SEND` (the policy refuses writes to the daemon's numbers), so it walks the bytes
    /// once and stops at the first that differs: an ordinary name costs one byte comparison.
    public static func isSystem(_ name: String) -> Bool {
        // Asked on every PUB: most names do not start with `$`, and their first byte answers.
        guard name.utf8.first == UInt8(ascii: "$") else { return false }
        var bytes = name.utf8.makeIterator()
        for expected in systemToken.utf8 {
            guard bytes.next() == expected else { return false }
        }
        let next = bytes.next()
        return next == nil || next == UInt8(ascii: ".")
    }

    /// True when `token` (a name's first token, as bytes) is `$SYS`.
    public static func isSystemToken<Bytes: Collection<UInt8>>(_ token: Bytes) -> Bool {
        token.elementsEqual(systemToken.utf8)
    }

    /// The first token of the daemon's own numbers.
    public static let systemToken = "$SYS"

    /// The prefix of the daemon's own numbers, which clients may subscribe to but not create, remove or publish to.
    public static let systemPrefix = systemToken + "."

    /// True when the pattern's first token is `*` or `>`.
    public static func firstTokenIsWildcard(_ pattern: String) -> Bool {
        var bytes = pattern.utf8.makeIterator()
        guard let first = bytes.next(), first == UInt8(ascii: "*") || first == UInt8(ascii: ">") else { return false }
        let second = bytes.next()
        return second == nil || second == UInt8(ascii: ".")
    }

    /// Cuts the next dot-separated token off `rest`; nil once the last token was taken.
    private static func nextToken(_ rest: inout Substring.UTF8View?) -> Substring.UTF8View? {
        guard let bytes = rest else { return nil }
        if let dot = bytes.firstIndex(of: UInt8(ascii: ".")) {
            rest = bytes[bytes.index(after: dot)...]
            return bytes[..<dot]
        }
        rest = nil
        return bytes
    }
}
