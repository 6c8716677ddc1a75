extension Names {
    /// Whether every number that `pattern` matches is matched by at least one of `patterns`: the check of a
    /// `SUB` against a user's subscribe patterns (docs/PROTOCOL.md, Users and permissions). Matching is
    /// ``matches(pattern:number:)``'s, the `$SYS` rule included; the patterns together cover (a union):
    ///
    /// ```swift
    /// Names.covers(["SCIENCE.*"], "SCIENCE.physics")        // true
    /// Names.covers(["SCIENCE.*"], "SCIENCE.>")              // false: SCIENCE.physics.atoms is not matched
    /// Names.covers(["SCIENCE.*", "SCIENCE.*.>"], "SCIENCE.>") // true: one or the other matches each number
    /// Names.covers(["*", "*.>"], ">")                       // true; only such sets (and ">") cover ">"
    /// Names.covers([">"], "$SYS.stats")                     // false: ">" matches no $SYS number
    /// ```
    ///
    /// A pattern without wildcards is a number: it is covered when some pattern matches it. All names are
    /// expected to be valid (see ``checkPattern(_:)``). It runs in time linear in the patterns' lengths (no
    /// backtracking), so it suits a command; it is not meant for every message.
    public static func covers(_ patterns: [String], _ pattern: String) -> Bool {
        let wanted = coverageTokens(pattern)
        // The allow patterns still alive: each matches the numbers' tokens so far, one token for one token (a
        // `>` ends the walk), so every alive pattern stands at the same position as `wanted`.
        var alive = patterns.map(coverageTokens)
        if case .literal(let first) = wanted[0], isSystemToken(first) {
            // Numbers of the daemon's own: a pattern starting with a wildcard matches none of them.
            alive.removeAll { $0[0].isWildcard }
        }
        // When `wanted` starts with a wildcard it matches no $SYS number, and the token chosen below (one that no
        // pattern names) is not $SYS: nothing more to do.
        for index in wanted.indices {
            // The numbers still have at least one token from here: an alive `>` matches every such rest.
            if alive.contains(where: { $0.hasRest(at: index) }) { return true }
            switch wanted[index] {
            case .literal(let token):
                alive.removeAll { !$0.accepts(token, at: index) }
            case .one:
                // `*` stands for every token, among them one that no pattern names, which only a `*` matches;
                // whatever survives that token survives every other one too.
                alive.removeAll { !$0.hasOne(at: index) }
            case .rest:
                // `>` is one token (as `*`), then either the end or one more `>`, as long as that takes.
                var position = index
                while true {
                    alive.removeAll { !$0.hasOne(at: position) }
                    if !alive.contains(where: { $0.count == position + 1 }) { return false }
                    position += 1
                    if alive.contains(where: { $0.hasRest(at: position) }) { return true }
                }
            }
        }
        return alive.contains { $0.count == wanted.count }
    }

    /// Whether some number is matched by both patterns: the check of a pattern against a deny list. Matching is
    /// ``matches(pattern:number:)``'s, the `$SYS` rule included:
    ///
    /// ```swift
    /// Names.overlaps("A.*", "*.B")         // true: A.B
    /// Names.overlaps("A.>", "A")           // false: A.> needs a second token
    /// Names.overlaps(">", "$SYS.stats")    // false: ">" matches no $SYS number
    /// Names.overlaps("$SYS.*", "$SYS.>")   // true: $SYS.stats
    /// ```
    ///
    /// Both names are expected to be valid (see ``checkPattern(_:)``).
    public static func overlaps(_ a: String, _ b: String) -> Bool {
        let left = coverageTokens(a)
        let right = coverageTokens(b)
        // A number matched by a pattern starting with a wildcard is not $SYS; one matched by `$SYS...` is.
        if left[0].isWildcard, case .literal(let first) = right[0], isSystemToken(first) { return false }
        if right[0].isWildcard, case .literal(let first) = left[0], isSystemToken(first) { return false }
        var index = 0
        while index < left.count && index < right.count {
            if left[index] == .rest || right[index] == .rest { return true }
            if case .literal(let x) = left[index], case .literal(let y) = right[index], !x.elementsEqual(y) {
                return false
            }
            index += 1
        }
        return left.count == right.count
    }

    /// Splits a name into the tokens ``covers(_:_:)`` and ``overlaps(_:_:)`` reason about, with the wildcards
    /// as ``matches(pattern:number:)`` reads them: `*` anywhere, `>` as the last token.
    private static func coverageTokens(_ name: String) -> [CoverageToken] {
        let parts = name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return parts.indices.map { index in
            let part = parts[index]
            if part.count == 1 {
                let byte = part[part.startIndex]
                if byte == UInt8(ascii: "*") { return .one }
                if byte == UInt8(ascii: ">") && index == parts.count - 1 { return .rest }
            }
            return .literal(part)
        }
    }
}

/// A pattern's token, for ``Names/covers(_:_:)`` and ``Names/overlaps(_:_:)``.
private enum CoverageToken: Equatable {
    /// A token compared byte for byte.
    case literal(Substring.UTF8View)
    /// `*`: exactly one token.
    case one
    /// `>` as the last token: one or more tokens.
    case rest

    var isWildcard: Bool { self == .one || self == .rest }

    static func == (lhs: CoverageToken, rhs: CoverageToken) -> Bool {
        switch (lhs, rhs) {
        case (.literal(let x), .literal(let y)): return x.elementsEqual(y)
        case (.one, .one), (.rest, .rest): return true
        default: return false
        }
    }
}

extension Array where Element == CoverageToken {
    /// True when the pattern's token at `index` is the last-token `>`.
    fileprivate func hasRest(at index: Int) -> Bool { index < count && self[index] == .rest }

    /// True when the pattern's token at `index` is `*`.
    fileprivate func hasOne(at index: Int) -> Bool { index < count && self[index] == .one }

    /// True when the pattern's token at `index` matches the number token `token` as one token (`*` or equal).
    fileprivate func accepts(_ token: Substring.UTF8View, at index: Int) -> Bool {
        guard index < count else { return false }
        switch self[index] {
        case .one: return true
        case .literal(let own): return own.elementsEqual(token)
        case .rest: return false  // `covers` answers before it asks: an alive `>` covers the rest at once.
        }
    }
}
