import SubscriptionWire
import XCTest

/// The number and pattern rules of docs/PROTOCOL.md, Words.

final class NamesTests: XCTestCase {
    func testValidNumbers() {
        let valid = [
            "SCIENCE", "SCIENCE.physics", "a-b_c.d:e", "Ünïcödé.x", "a*", ">x", "x>.*y", "1.2.3",
            String(repeating: "a", count: Names.maxLength),
        ]
        for name in valid {
            XCTAssertNoThrow(try Names.checkNumber(name), name)
            XCTAssertEqual(try Names.checkPattern(name), false, "\(name) holds no wildcard")
        }
    }

    func testInvalidNumbers() {
        let cases: [(String, Names.Problem)] = [
            ("", .empty),
            (String(repeating: "a", count: Names.maxLength + 1), .tooLong(Names.maxLength + 1)),
            ("A B", .forbiddenByte(0x20)),
            ("A\tB", .forbiddenByte(0x09)),
            ("A\nB", .forbiddenByte(0x0A)),
            ("A\u{7F}", .forbiddenByte(0x7F)),
            ("A..B", .emptyToken),
            (".A", .emptyToken),
            ("A.", .emptyToken),
            (".", .emptyToken),
            ("*", .wildcardInNumber),
            (">", .wildcardInNumber),
            ("A.*", .wildcardInNumber),
            ("A.>", .wildcardInNumber),
            ("*.A", .wildcardInNumber),
        ]
        for (name, problem) in cases {
            XCTAssertThrowsError(try Names.checkNumber(name), name.debugDescription) { error in
                XCTAssertEqual(error as? Names.Problem, problem, name.debugDescription)
            }
        }
    }

    func testPatterns() {
        let wildcard = [">", "*", "A.*", "A.>", "*.*.>", "A.*.C", "*.B"]
        for pattern in wildcard {
            XCTAssertEqual(try Names.checkPattern(pattern), true, pattern)
        }
        let cases: [(String, Names.Problem)] = [
            ("", .empty),
            ("A.>.B", .fullWildcardNotLast),
            (">.A", .fullWildcardNotLast),
            ("A..*", .emptyToken),
            ("A.*.", .emptyToken),
            ("A *", .forbiddenByte(0x20)),
            (String(repeating: "*.", count: 100) + "*", .tooLong(201)),
        ]
        for (pattern, problem) in cases {
            XCTAssertThrowsError(try Names.checkPattern(pattern), pattern.debugDescription) { error in
                XCTAssertEqual(error as? Names.Problem, problem, pattern.debugDescription)
            }
        }
    }

    func testRawBytesMustBeUTF8() {
        XCTAssertThrowsError(try Names.check([0x41, 0xFF, 0x42], allowWildcards: true)) { error in
            XCTAssertEqual(error as? Names.Problem, .invalidUTF8)
        }
        XCTAssertEqual(try Names.check(Array("A.*".utf8), allowWildcards: true), true)
    }

    /// Tokens are split at the byte `.`: a dot followed by a combining mark is still a dot (as Characters the two
    /// are one grapheme).
    func testTokensSplitAtTheByteDot() {
        XCTAssertEqual(Names.tokens("A.\u{301}x").map { Array($0.utf8) }, [[0x41], Array("\u{301}x".utf8)])
        XCTAssertEqual(Names.tokens("SCIENCE.physics.>"), ["SCIENCE", "physics", ">"])
        XCTAssertEqual(Names.tokens("X"), ["X"])
    }

    func testProblemDescriptions() {
        XCTAssertEqual(Names.Problem.forbiddenByte(0x20).description, "holds a space")
        XCTAssertEqual(Names.Problem.forbiddenByte(0x0A).description, "holds the control character 0xa")
        XCTAssertEqual(Names.Problem.tooLong(201).description, "is 201 bytes long (at most 200)")
    }
}
