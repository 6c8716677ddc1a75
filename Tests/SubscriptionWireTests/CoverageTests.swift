import SubscriptionWire
import TestSupport
import XCTest

/// `Names.covers` (a SUB against a user's subscribe patterns), `Names.overlaps` (a pattern against a deny list)
/// and `PatternRules`: tables, and randomized comparisons with brute-force matching over every number of a small
/// alphabet, with `Names.matches` as the judge.
final class CoverageTests: XCTestCase {
    // MARK: Tables

    /// Allow patterns, a pattern, and whether the allow patterns together match every number the pattern matches.
    static let coverTable: [(allow: [String], pattern: String, covered: Bool)] = [
        // The examples.
        (["SCIENCE.*"], "SCIENCE.>", false),
        (["SCIENCE.>"], "SCIENCE.*", true),
        (["SCIENCE.*"], "SCIENCE.physics", true),
        (["SCIENCE.*"], "SCIENCE.*", true),
        (["SCIENCE.*"], "SCIENCE", false),
        (["SCIENCE.>"], "SCIENCE.>", true),
        (["SCIENCE.>"], "SCIENCE", false),
        (["SCIENCE.>"], "SCIENCE.*.*.>", true),
        // Unions: each number matched by one pattern or another.
        (["A.*", "A.*.>"], "A.>", true),
        (["A.*.>", "A.*"], "A.>", true),
        (["A.*", "A.*.*"], "A.>", false),
        (["A.*", "A.*.*", "A.*.*.>"], "A.>", true),
        (["A.*", "A.B.>"], "A.>", false),
        (["A.*", "A.B"], "A.*", true),
        (["A.B", "A.C"], "A.*", false),
        (["*.B", "A.*"], "A.B", true),
        (["*.B", "A.*"], "A.*", true),
        (["*.B", "B.*"], "A.*", false),
        (["A.*.C", "A.B.*"], "A.B.C", true),
        (["A.*.C", "A.B.*"], "A.B.*", true),
        (["A.*.C", "A.B.*"], "A.*.C", true),
        (["A.*.C", "A.B.*"], "A.*.*", false),
        (["A.*.C", "A.B.*"], "A.B.>", false),
        (["A.B.>", "A.*.C.>"], "A.B.C.>", true),
        // ">" is covered only by ">" or sets like it.
        ([">"], ">", true),
        (["*", "*.>"], ">", true),
        (["*.>", "*"], ">", true),
        (["*", "*.*", "*.*.>"], ">", true),
        (["*", "*.*", "*.*.*"], ">", false),
        (["*.>"], ">", false),
        (["*"], ">", false),
        (["A.>", "B.>", "*"], ">", false),
        (["A", "*.>"], ">", false),
        (["*", "*.>"], "*.>", true),
        (["*.>"], "*.*.>", true),
        (["*.*.>"], "*.>", false),
        // Literal patterns are numbers.
        (["A.B"], "A.B", true),
        (["A.B"], "A.C", false),
        (["A.B"], "A.B.C", false),
        (["A.B"], "A", false),
        (["A.*"], "A.B", true),
        (["*.*"], "A.B", true),
        ([">"], "A.B.C", true),
        ([], "A", false),
        ([], ">", false),
        // $SYS: only patterns starting with a literal match the daemon's numbers.
        ([">"], "$SYS.stats", false),
        (["*.stats"], "$SYS.stats", false),
        (["*.>"], "$SYS.stats", false),
        (["$SYS.>"], "$SYS.stats", true),
        (["$SYS.*"], "$SYS.stats", true),
        (["$SYS.*"], "$SYS.>", false),
        (["$SYS.*", "$SYS.*.>"], "$SYS.>", true),
        ([">", "*.>"], "$SYS.>", false),
        (["$SYS.>"], "$SYS.*", true),
        (["$SYS.>"], ">", false),
        (["$SYS.>", ">"], ">", true),
        ([">"], "*.stats", true),
        (["*.stats"], "*.stats", true),
        ([">", "$SYS.>"], "$SYS", false),
        ([">", "$SYS", "$SYS.>"], "$SYS", true),
        (["$SYS"], "*", false),
        (["*"], "$SYS", false),
        (["$SYS", "*"], "*", true),
        // Other $ names, and $SYS past the first token, are ordinary.
        ([">"], "$SYSX.a", true),
        ([">"], "$sys.a", true),
        (["*.>"], "$price.x", true),
        (["A.>"], "A.$SYS", true),
        (["A.*"], "A.$SYS.>", false),
        // Byte for byte; wildcard bytes inside a longer token are literal.
        (["caf\u{E9}.*"], "cafe\u{301}.x", false),
        (["caf\u{E9}.>"], "caf\u{E9}.x.y", true),
        (["a*"], "ab", false),
        (["a*"], "*", false),
        (["a*.>"], "a*.b", true),
        ([">x"], ">", false),
        (["*b"], "*b", true),
    ]

    /// Pairs of patterns and whether some number is matched by both.
    static let overlapTable: [(a: String, b: String, overlap: Bool)] = [
        ("A.*", "*.B", true),
        ("A.>", "A", false),
        ("A.>", "A.B.C", true),
        ("A", "A", true),
        ("A", "B", false),
        (">", "A.B.C", true),
        (">", ">", true),
        (">", "*", true),
        ("*.*", "A.>", true),
        ("*.*", "A.B.>", false),
        ("*", "A.>", false),
        ("*", "*.*", false),
        ("A.*.C", "A.B.*", true),
        ("A.*.C", "A.B.D", false),
        ("A.*.C", "B.>", false),
        ("ADMIN.>", "*.users", true),
        ("ADMIN.>", "NEWS.>", false),
        // $SYS.
        (">", "$SYS.stats", false),
        (">", "$SYS.>", false),
        ("*.stats", "$SYS.>", false),
        ("*.stats", "$SYS.stats", false),
        ("$SYS.*", "$SYS.>", true),
        ("$SYS.stats", "$SYS.*", true),
        ("$SYS", "$SYS", true),
        ("$SYS", ">", false),
        ("$SYS", "*", false),
        ("*.>", "*.*", true),
        ("A.$SYS", "A.*", true),
        ("$SYSX.a", ">", true),
        // Byte for byte.
        ("caf\u{E9}", "cafe\u{301}", false),
        ("caf\u{E9}.>", "caf\u{E9}.*", true),
        ("a*", "ab", false),
    ]

    func testCoverTable() {
        for (allow, pattern, covered) in Self.coverTable {
            XCTAssertEqual(Names.covers(allow, pattern), covered, "\(allow) covers \(pattern)")
            XCTAssertEqual(Self.bruteCovers(allow, pattern), covered, "brute force: \(allow) covers \(pattern)")
        }
    }

    func testOverlapTable() {
        for (a, b, overlap) in Self.overlapTable {
            XCTAssertEqual(Names.overlaps(a, b), overlap, "\(a) overlaps \(b)")
            XCTAssertEqual(Names.overlaps(b, a), overlap, "\(b) overlaps \(a)")
            XCTAssertEqual(Self.bruteOverlaps(a, b), overlap, "brute force: \(a) overlaps \(b)")
        }
    }

    /// Every table pattern is valid, so the tables test what the server will pass.
    func testTablesHoldValidPatterns() throws {
        for (allow, pattern, _) in Self.coverTable {
            for name in allow + [pattern] { try Names.checkPattern(name) }
        }
        for (a, b, _) in Self.overlapTable {
            try Names.checkPattern(a)
            try Names.checkPattern(b)
        }
    }

    /// 32 tokens, the longest a SUB will meet in practice: linear, no backtracking.
    func testLongPatterns() {
        let stars = (1...32).map { Array(repeating: "*", count: $0).joined(separator: ".") }
        let letters = Array(repeating: "A", count: 32).joined(separator: ".")
        XCTAssertTrue(Names.covers([stars[31]], letters))
        XCTAssertFalse(Names.covers([stars[30]], letters))
        // ">" up to 32 tokens and beyond: every length from 1 to 32, then one more with ">".
        let everyLength = stars + [stars[31] + ".>"]
        XCTAssertTrue(Names.covers(everyLength, ">"))
        for missing in everyLength.indices {
            var gap = everyLength
            gap.remove(at: missing)
            XCTAssertFalse(Names.covers(gap, ">"), "without \(everyLength[missing])")
        }
        let long = stars[30] + ".>"
        XCTAssertTrue(Names.covers(everyLength, long))
        XCTAssertTrue(Names.overlaps(long, letters))
        XCTAssertFalse(Names.overlaps(stars[30], letters))
    }

    // MARK: Against brute force

    /// Every number over `tokens` of 1 to `length` tokens, shortest first.
    static func numbers(over tokens: [String], upTo length: Int) -> [String] {
        var all: [String] = []
        var layer = [""]
        for _ in 0..<length {
            layer = layer.flatMap { prefix in tokens.map { prefix.isEmpty ? $0 : prefix + "." + $0 } }
            all += layer
        }
        return all
    }

    /// The numbers that can tell whether `patterns` match alike: over the literal tokens they name plus one they
    /// do not name (`Z`, standing for every other token), with up to two tokens more than the longest (a longer
    /// number behaves as one with a token less, as far as the patterns can see).
    static func candidates(_ patterns: [String]) -> [String] {
        var literals: [String] = []
        for pattern in patterns {
            let tokens = Names.tokens(pattern)
            for (index, token) in tokens.enumerated() {
                if token == "*" || (token == ">" && index == tokens.count - 1) { continue }
                if !literals.contains(where: { $0.utf8.elementsEqual(token.utf8) }) { literals.append(String(token)) }
            }
        }
        var fresh = "Z"
        while literals.contains(where: { $0.utf8.elementsEqual(fresh.utf8) }) { fresh += "Z" }
        literals.append(fresh)
        let longest = patterns.map { Names.tokens($0).count }.max() ?? 0
        return numbers(over: literals, upTo: longest + 2)
    }

    /// Every number `pattern` matches is matched by some allowed pattern.
    static func bruteCovers(_ allow: [String], _ pattern: String) -> Bool {
        candidates(allow + [pattern]).allSatisfy { number in
            !Names.matches(pattern: pattern, number: number)
                || allow.contains { Names.matches(pattern: $0, number: number) }
        }
    }

    /// Some number is matched by both.
    static func bruteOverlaps(_ a: String, _ b: String) -> Bool {
        candidates([a, b]).contains { Names.matches(pattern: a, number: $0) && Names.matches(pattern: b, number: $0) }
    }

    /// The named tokens of generated patterns; `Z` is the token none of them names.
    static let literals = ["A", "B", "$SYS"]

    /// Brute force for generated patterns (1 to 4 tokens over ``literals``, `*`, and `>` last): which of every
    /// number over ``literals`` and `Z` of 1 to 6 tokens each pattern matches, by `Names.matches`, as a bit set.
    /// All 425 such patterns are computed once, for every test.
    final class MatchSets: Sendable {
        static let shared = MatchSets()

        let numbers: [String]
        private let sets: [String: [UInt64]]

        private init() {
            let numberTokens = CoverageTests.literals + ["Z"]
            let numbers = CoverageTests.numbers(over: numberTokens, upTo: 6)
            // Where the numbers of each token count start (they come shortest first).
            var start = [0, 0]
            var size = 1
            for length in 1...6 {
                size *= numberTokens.count
                start.append(start[length] + size)
            }
            precondition(start[7] == numbers.count)
            var sets: [String: [UInt64]] = [:]
            let patternTokens = CoverageTests.literals + ["*"]
            let withoutRest = CoverageTests.numbers(over: patternTokens, upTo: 4)
            let withRest = [">"] + CoverageTests.numbers(over: patternTokens, upTo: 3).map { $0 + ".>" }
            for pattern in withoutRest + withRest {
                var set = [UInt64](repeating: 0, count: (numbers.count + 63) / 64)
                // Only numbers of a token count the pattern can match: no other can be matched.
                let count = Names.tokens(pattern).count
                let end = pattern.hasSuffix(">") ? numbers.count : start[count + 1]
                for index in start[count]..<end where Names.matches(pattern: pattern, number: numbers[index]) {
                    set[index / 64] |= 1 << UInt64(index % 64)
                }
                sets[pattern] = set
            }
            precondition(sets.count == 425)
            self.numbers = numbers
            self.sets = sets
        }

        func matched(_ pattern: String) -> [UInt64] {
            guard let set = sets[pattern] else { preconditionFailure("not a generated pattern: \(pattern)") }
            return set
        }

        /// Every number `pattern` matches is matched by some allowed pattern.
        func covers(_ allow: [String], _ pattern: String) -> Bool {
            let wanted = matched(pattern)
            let allowed = allow.map(matched)
            return wanted.indices.allSatisfy { word in
                wanted[word] & ~allowed.reduce(0) { $0 | $1[word] } == 0
            }
        }

        /// Some number is matched by both.
        func overlaps(_ a: String, _ b: String) -> Bool {
            zip(matched(a), matched(b)).contains { $0 & $1 != 0 }
        }
    }

    /// The shared bit sets agree with the per-case brute force that the tables are checked with.
    func testMatchSetsAgreeWithPerCaseBruteForce() {
        let sets = MatchSets.shared
        XCTAssertEqual(sets.numbers.count, 4 + 16 + 64 + 256 + 1024 + 4096)
        var random = SeededGenerator(seed: 99)
        for _ in 0..<200 {
            let allow = (0..<Int.random(in: 1...3, using: &random)).map { _ in Self.pattern(using: &random) }
            let pattern = Self.pattern(using: &random)
            XCTAssertEqual(sets.covers(allow, pattern), Self.bruteCovers(allow, pattern), "\(allow) covers \(pattern)")
            XCTAssertEqual(sets.overlaps(allow[0], pattern), Self.bruteOverlaps(allow[0], pattern))
        }
    }

    func testCoversAgreesWithBruteForce() throws {
        let brute = MatchSets.shared
        var covered = 0
        var coveredOnlyTogether = 0
        var systemPatterns = 0
        var compared = 0
        for seed in UInt64(1)...20 {
            var random = SeededGenerator(seed: seed)
            for _ in 0..<1000 {
                let allow: [String]
                let pattern: String
                switch Int.random(in: 0..<3, using: &random) {
                case 0:
                    allow = (0..<Int.random(in: 1...3, using: &random)).map { _ in Self.pattern(using: &random) }
                    pattern = Self.pattern(using: &random)
                case 1:
                    // A narrowing of an allowed pattern, so that covered sets come up often.
                    allow = (0..<Int.random(in: 1...3, using: &random)).map { _ in Self.pattern(using: &random) }
                    pattern = Self.narrowing(allow.randomElement(using: &random)!, using: &random)
                default:
                    // Pieces of a `>`, so that sets covering only together come up often.
                    (allow, pattern) = Self.union(using: &random)
                }
                for name in allow + [pattern] { try Names.checkPattern(name) }
                let expected = brute.covers(allow, pattern)
                XCTAssertEqual(Names.covers(allow, pattern), expected, "seed \(seed): \(allow) covers \(pattern)")
                compared += 1
                if expected {
                    covered += 1
                    if !allow.contains(where: { brute.covers([$0], pattern) }) { coveredOnlyTogether += 1 }
                }
                if Names.isSystem(pattern) || allow.contains(where: Names.isSystem) { systemPatterns += 1 }
            }
        }
        // Not vacuous: both answers come up often, unions matter, and $SYS patterns take part.
        XCTAssertGreaterThan(covered, compared / 5, "\(covered) of \(compared) covered")
        XCTAssertLessThan(covered, compared * 4 / 5, "\(covered) of \(compared) covered")
        XCTAssertGreaterThan(coveredOnlyTogether, compared / 100, "\(coveredOnlyTogether) covered only by a union")
        XCTAssertGreaterThan(systemPatterns, compared / 10, "\(systemPatterns) with $SYS")
        print(
            "covers: \(compared) compared, \(covered) covered, \(coveredOnlyTogether) only by a union, "
                + "\(systemPatterns) with $SYS")
    }

    func testOverlapsAgreesWithBruteForce() throws {
        let brute = MatchSets.shared
        var overlapping = 0
        var compared = 0
        for seed in UInt64(1)...20 {
            var random = SeededGenerator(seed: seed)
            for _ in 0..<1000 {
                let a = Self.pattern(using: &random)
                let b = Self.pattern(using: &random)
                try Names.checkPattern(a)
                try Names.checkPattern(b)
                let expected = brute.overlaps(a, b)
                XCTAssertEqual(Names.overlaps(a, b), expected, "seed \(seed): \(a) overlaps \(b)")
                XCTAssertEqual(Names.overlaps(b, a), expected, "seed \(seed): \(b) overlaps \(a)")
                compared += 1
                if expected { overlapping += 1 }
            }
        }
        XCTAssertGreaterThan(overlapping, compared / 5, "\(overlapping) of \(compared) overlap")
        XCTAssertLessThan(overlapping, compared * 4 / 5, "\(overlapping) of \(compared) overlap")
        print("overlaps: \(compared) compared, \(overlapping) overlap")
    }

    /// A pattern of 1 to 4 tokens: each a literal or `*`, the last one possibly `>`.
    static func pattern(using random: inout SeededGenerator) -> String {
        let count = Int.random(in: 1...4, using: &random)
        return (0..<count).map { index in
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3: return "*"
            case 3..<6 where index == count - 1: return ">"
            default: return literals.randomElement(using: &random)!
            }
        }.joined(separator: ".")
    }

    /// A pattern of at most 4 tokens that matches some of the numbers `pattern` matches, often all of them:
    /// a `*` may become a literal, a `>` may become `*`, a literal, or longer (`*.>`, `A.*`, ...).
    static func narrowing(_ pattern: String, using random: inout SeededGenerator) -> String {
        var tokens = Names.tokens(pattern).map(String.init)
        for index in tokens.indices where tokens[index] == "*" && Int.random(in: 0..<3, using: &random) == 0 {
            tokens[index] = literals.randomElement(using: &random)!
        }
        if tokens.last == ">" {
            tokens.removeLast()
            let room = 4 - tokens.count
            let extra = Int.random(in: 0..<room, using: &random)
            for _ in 0..<extra {
                tokens.append(Bool.random(using: &random) ? "*" : literals.randomElement(using: &random)!)
            }
            tokens.append(Int.random(in: 0..<3, using: &random) == 0 ? "*" : ">")
        }
        return tokens.joined(separator: ".")
    }

    /// Allow patterns that split a pattern ending in `>` (`P.>` into `P.*` and `P.*.>`, or `P.*`, `P.*.*` and
    /// `P.*.*.>`), a piece sometimes narrowed (so the union may fall short), and the pattern or a narrowing of it.
    static func union(using random: inout SeededGenerator) -> (allow: [String], pattern: String) {
        let pieces = Int.random(in: 2...3, using: &random)
        let prefix = (0..<Int.random(in: 0...(4 - pieces), using: &random)).map { _ in
            Bool.random(using: &random) ? "*" : literals.randomElement(using: &random)!
        }
        var allow = (1..<pieces).map { stars in (prefix + Array(repeating: "*", count: stars)).joined(separator: ".") }
        allow.append((prefix + Array(repeating: "*", count: pieces - 1) + [">"]).joined(separator: "."))
        if Int.random(in: 0..<3, using: &random) == 0 {
            let index = allow.indices.randomElement(using: &random)!
            allow[index] = narrowing(allow[index], using: &random)
        }
        allow.shuffle(using: &random)
        let whole = (prefix + [">"]).joined(separator: ".")
        return (allow, Bool.random(using: &random) ? whole : narrowing(whole, using: &random))
    }

    // MARK: PatternRules

    func testPermitsNumber() {
        let rules = PatternRules(allow: ["SCIENCE.>", "NEWS.*"], deny: ["SCIENCE.secret.>"])
        XCTAssertTrue(rules.permits(number: "SCIENCE.physics"))
        XCTAssertTrue(rules.permits(number: "NEWS.today"))
        XCTAssertFalse(rules.permits(number: "NEWS.today.late"))
        XCTAssertFalse(rules.permits(number: "SCIENCE.secret.x"))
        XCTAssertTrue(rules.permits(number: "SCIENCE.secret"))
        XCTAssertFalse(rules.permits(number: "ADMIN"))
        XCTAssertFalse(PatternRules(allow: [">"]).permits(number: "$SYS.stats"))
        XCTAssertFalse(PatternRules.nothing.permits(number: "A"))
    }

    func testPermitsPattern() {
        let rules = PatternRules(allow: ["SCIENCE.>"], deny: ["SCIENCE.secret.>"])
        XCTAssertTrue(rules.permits(pattern: "SCIENCE.*"))
        XCTAssertTrue(rules.permits(pattern: "SCIENCE.physics.>"))
        XCTAssertFalse(rules.permits(pattern: "SCIENCE.>"), "could match SCIENCE.secret.x")
        XCTAssertFalse(rules.permits(pattern: "SCIENCE.*.x"), "could match SCIENCE.secret.x")
        XCTAssertTrue(rules.permits(pattern: "SCIENCE.secret"))
        XCTAssertFalse(rules.permits(pattern: ">"))
        let admin = PatternRules(allow: [">"], deny: ["ADMIN.>"])
        XCTAssertTrue(admin.permits(pattern: "NEWS.>"))
        XCTAssertFalse(admin.permits(pattern: "*.users"))
        XCTAssertTrue(admin.permits(pattern: "ADMIN"))
        XCTAssertFalse(admin.permits(pattern: "$SYS.>"), "> does not allow the daemon's numbers")
        XCTAssertTrue(PatternRules(allow: ["SCIENCE.*"]).permits(pattern: "SCIENCE.*"))
        XCTAssertFalse(PatternRules(allow: ["SCIENCE.*"]).permits(pattern: "SCIENCE.>"))
    }

    func testEverythingAndNothing() {
        for pattern in [">", "*", "A.>", "$SYS", "$SYS.>", "$SYS.*", "$SYS.client.*"] {
            XCTAssertTrue(PatternRules.everything.permits(pattern: pattern), pattern)
            XCTAssertFalse(PatternRules.nothing.permits(pattern: pattern), pattern)
        }
        for number in ["A", "A.B", "$SYS", "$SYS.stats", "$price"] {
            XCTAssertTrue(PatternRules.everything.permits(number: number), number)
            XCTAssertFalse(PatternRules.nothing.permits(number: number), number)
        }
        XCTAssertNoThrow(try PatternRules.everything.validate())
    }

    func testValidate() {
        XCTAssertNoThrow(try PatternRules(allow: ["A.>", "*.B"], deny: ["A.x"]).validate())
        XCTAssertNoThrow(try PatternRules(allow: [], deny: []).validate())
        let cases: [(PatternRules, PatternRules.Problem)] = [
            (PatternRules(allow: ["A", "A.>.B"]), .init(list: .allow, entry: "A.>.B", problem: .fullWildcardNotLast)),
            (PatternRules(allow: ["A"], deny: ["A..B"]), .init(list: .deny, entry: "A..B", problem: .emptyToken)),
            (PatternRules(allow: [""]), .init(list: .allow, entry: "", problem: .empty)),
            (PatternRules(allow: ["A B"]), .init(list: .allow, entry: "A B", problem: .forbiddenByte(0x20))),
        ]
        for (rules, expected) in cases {
            XCTAssertThrowsError(try rules.validate()) { error in
                XCTAssertEqual(error as? PatternRules.Problem, expected)
            }
        }
        XCTAssertEqual(
            PatternRules.Problem(list: .allow, entry: "A.>.B", problem: .fullWildcardNotLast).description,
            "allow pattern \"A.>.B\" has '>' before its last token")
    }
}
