/// An independent, obviously-correct pattern matcher, the reference the real ones are checked against: it splits
/// both names into byte tokens and tries the rules of docs/PROTOCOL.md (Words) one token at a time,
/// recursively. `*` matches exactly one token; `>` as the last token matches one or more; any other token must be
/// equal byte for byte. A number whose first token is `$SYS` (the daemon's own) is matched only by a pattern whose
/// first token is literal (protocol 1.1, "System notifications").
public func referenceMatches(pattern: String, number: String) -> Bool {
    let p = byteTokens(pattern)
    let n = byteTokens(number)
    if n.first == Array("$SYS".utf8) && (p.first == [UInt8(ascii: "*")] || p.first == [UInt8(ascii: ">")]) {
        return false
    }
    func match(_ i: Int, _ j: Int) -> Bool {
        if i == p.count { return j == n.count }
        if p[i] == [UInt8(ascii: ">")] && i == p.count - 1 { return j < n.count }
        if j == n.count { return false }
        if p[i] == [UInt8(ascii: "*")] || p[i] == n[j] { return match(i + 1, j + 1) }
        return false
    }
    return match(0, 0)
}

private func byteTokens(_ name: String) -> [[UInt8]] {
    name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map(Array.init)
}

/// Patterns, numbers and whether they match: the table every matcher is checked on (the wire's matcher, the
/// center's trie, the client's routing).
public let wildcardTable: [(pattern: String, number: String, matches: Bool)] = [
    (">", "A", true),
    (">", "$SYS.stats", false),
    ("*.stats", "$SYS.stats", false),
    ("*.>", "$SYS.client.connected", false),
    ("$SYS.>", "$SYS.client.connected", true),
    ("$SYS.*", "$SYS.stats", true),
    ("$SYS.client.*", "$SYS.client.connected", true),
    ("A.>", "A.$x", true),
    (">", "$price", true),
    ("*.b", "$a.b", true),
    ("*", "$SYS", false),
    ("*.stats", "$SYSX.stats", true),
    (">", "A.B", true),
    (">", "A.B.C", true),
    ("*", "A", true),
    ("*", "A.B", false),
    ("A.>", "A", false),
    ("A.>", "A.B", true),
    ("A.>", "A.B.C", true),
    ("A.>", "B.A", false),
    ("A.*", "A", false),
    ("A.*", "A.B", true),
    ("A.*", "A.B.C", false),
    ("*.B", "A.B", true),
    ("*.B", "A.C", false),
    ("*.B", "B", false),
    ("*.*", "A.B", true),
    ("*.*", "A", false),
    ("*.>", "A", false),
    ("*.>", "A.B", true),
    ("*.>", "A.B.C", true),
    ("A.*.C", "A.B.C", true),
    ("A.*.C", "A.B.D", false),
    ("A.*.C", "A.C", false),
    ("A.B.>", "A.B", false),
    ("A.B.>", "A.B.C.D", true),
    ("*.*.>", "A.B", false),
    ("*.*.>", "A.B.C", true),
    ("A.B", "A.B", true),
    ("A.B", "A.BC", false),
    ("A.B", "A.B.C", false),
    ("AB", "A", false),
    ("A", "AB", false),
    ("a", "A", false),
    ("a*", "a*", true),
    ("a*", "ab", false),
    (">x", ">x", true),
    ("SCIENCE.*", "SCIENCE.physics", true),
    ("Ünï.*", "Ünï.cöde", true),
    ("Ünï.*", "Uni.code", false),
    // Byte for byte: a precomposed é and e + U+0301 are equal Swift Strings but different names.
    ("caf\u{E9}", "cafe\u{301}", false),
    ("caf\u{E9}.*", "caf\u{E9}.x", true),
    ("*.x", "\u{301}.x", true),
    ("A.*", "A.\u{301}x", true),
]
