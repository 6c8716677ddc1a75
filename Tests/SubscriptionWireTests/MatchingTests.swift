import SubscriptionWire
import TestSupport
import XCTest

/// `Names.matches`, the one matcher of a number against a pattern: the shared table, and a randomized comparison
/// with the brute-force reference matcher of TestSupport over generated names.
final class MatchingTests: XCTestCase {
    func testTable() {
        for (pattern, number, expected) in wildcardTable {
            XCTAssertEqual(Names.matches(pattern: pattern, number: number), expected, "\(pattern) vs \(number)")
            XCTAssertEqual(referenceMatches(pattern: pattern, number: number), expected, "reference: \(pattern)")
        }
    }

    /// Canonically equivalent spellings are equal Swift Strings but different numbers.
    func testBytesNotCharacters() {
        XCTAssertEqual("caf\u{E9}", "cafe\u{301}", "precondition: Swift calls them equal")
        XCTAssertFalse(Names.matches(pattern: "caf\u{E9}", number: "cafe\u{301}"))
        XCTAssertFalse(Names.matches(pattern: "caf\u{E9}.>", number: "cafe\u{301}.x"))
        XCTAssertTrue(Names.matches(pattern: "*.>", number: "cafe\u{301}.x"))
        // A dot followed by a combining mark is one Character but two tokens' worth of bytes.
        XCTAssertTrue(Names.matches(pattern: "A.*", number: "A.\u{301}x"))
        XCTAssertFalse(Names.matches(pattern: "*", number: "A.\u{301}x"))
    }

    /// Token alphabets for generated names: short, so that literal tokens often coincide; ASCII, multi-byte,
    /// a combining mark, and the wildcard bytes inside longer tokens (which are literals).
    static let literals = [
        "A", "B", "a", "AB", "$SYS", "caf\u{E9}", "cafe\u{301}", "\u{301}", "a*", ">x", "*b", "\u{1F600}",
    ]

    func testRandomNamesAgreeWithTheReference() throws {
        var matched = 0
        var compared = 0
        for seed in UInt64(1)...20 {
            var random = SeededGenerator(seed: seed)
            for _ in 0..<500 {
                let pattern = Self.pattern(using: &random)
                let number = Self.number(using: &random)
                try Names.checkPattern(pattern)
                try Names.checkNumber(number)
                let expected = referenceMatches(pattern: pattern, number: number)
                XCTAssertEqual(
                    Names.matches(pattern: pattern, number: number), expected,
                    "seed \(seed): \(pattern.debugDescription) vs \(number.debugDescription)")
                compared += 1
                if expected { matched += 1 }
            }
        }
        // Not a vacuous comparison: both answers come up often.
        XCTAssertGreaterThan(matched, compared / 20, "\(matched) of \(compared) matched")
        XCTAssertLessThan(matched, compared * 9 / 10, "\(matched) of \(compared) matched")
    }

    /// A number of 1 to 4 literal tokens.
    static func number(using random: inout SeededGenerator) -> String {
        (0..<Int.random(in: 1...4, using: &random)).map { _ in literals.randomElement(using: &random)! }
            .joined(separator: ".")
    }

    /// A pattern of 1 to 4 tokens: each a literal or `*`, the last one possibly `>`.
    static func pattern(using random: inout SeededGenerator) -> String {
        let count = Int.random(in: 1...4, using: &random)
        var tokens: [String] = []
        for index in 0..<count {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<3: tokens.append("*")
            case 3..<5 where index == count - 1: tokens.append(">")
            default: tokens.append(literals.randomElement(using: &random)!)
            }
        }
        return tokens.joined(separator: ".")
    }
}
