import SubscriptionWire
import TestSupport
import XCTest

@testable import SubscriptionClient

/// Command encoding, and the local routing of pushes by pattern.
final class CommandTests: XCTestCase {
    func testEncoding() throws {
        XCTAssertEqual(try Command.hello(name: nil, token: nil), Array("HELLO\n".utf8))
        XCTAssertEqual(try Command.hello(name: "alice", token: "s3"), Array("HELLO name=alice token=s3\n".utf8))
        XCTAssertEqual(try Command.create("SCIENCE"), Array("CREATE SCIENCE\n".utf8))
        XCTAssertEqual(try Command.sub("A.*", from: "bob"), Array("SUB A.* from=bob\n".utf8))
        XCTAssertEqual(try Command.pub("X", [0x0A, 0x00]), Array("PUB X 2\n".utf8) + [0x0A, 0x00, 0x0A])
        XCTAssertEqual(try Command.pub("X", []), Array("PUB X 0\n\n".utf8))
        XCTAssertEqual(try Command.list(nil), Array("LIST\n".utf8))
        // Protocol 1.1.
        XCTAssertEqual(try Command.create("P", retained: true), Array("CREATE P retain\n".utf8))
        XCTAssertEqual(try Command.get("P"), Array("GET P\n".utf8))
        XCTAssertEqual(try Command.sub("A.*", from: nil, group: "g"), Array("SUB A.* group=g\n".utf8))
        XCTAssertEqual(try Command.sub("A", from: "bob", group: "g"), Array("SUB A from=bob group=g\n".utf8))
        XCTAssertEqual(try Command.list(nil, kinds: true), Array("LIST > kind\n".utf8), "a lone word is the pattern")
        XCTAssertEqual(try Command.list("kind", kinds: true), Array("LIST kind kind\n".utf8))
        XCTAssertEqual(try Command.list("A.>", kinds: true), Array("LIST A.> kind\n".utf8))
    }

    /// Every argument is checked with the wire's rules before anything is sent, and the refusal is typed.
    func testArgumentsBreakingTheWireRulesAreRefused() {
        let badNumbers: [(String, Names.Problem)] = [
            ("", .empty), ("A B", .forbiddenByte(0x20)), ("A\nPUB", .forbiddenByte(0x0A)),
            ("A\r", .forbiddenByte(0x0D)), ("A\u{7F}", .forbiddenByte(0x7F)),
            (String(repeating: "x", count: 201), .tooLong(201)), ("a..b", .emptyToken), ("A.*", .wildcardInNumber),
        ]
        for (number, problem) in badNumbers {
            XCTAssertThrowsError(try Command.create(number), number.debugDescription) { error in
                XCTAssertEqual(error as? ClientError, .invalidName(number, problem), number.debugDescription)
            }
            XCTAssertThrowsError(try Command.pub(number, []), number.debugDescription)
            XCTAssertThrowsError(try Command.remove(number), number.debugDescription)
        }
        XCTAssertNoThrow(try Command.create(String(repeating: "x", count: 200)))
        XCTAssertNoThrow(try Command.sub("A.*", from: nil))
        XCTAssertThrowsError(try Command.sub("A.>.B", from: nil)) { error in
            XCTAssertEqual(error as? ClientError, .invalidName("A.>.B", .fullWildcardNotLast))
        }
        XCTAssertThrowsError(try Command.list("A..*")) { error in
            XCTAssertEqual(error as? ClientError, .invalidName("A..*", .emptyToken))
        }
        for name in ["", "a b", "a\nb", String(repeating: "n", count: 65)] {
            XCTAssertThrowsError(try Command.sub("A", from: name), name.debugDescription) { error in
                guard case .invalidClientName(name, _) = error as? ClientError else { return XCTFail("\(error)") }
            }
            XCTAssertThrowsError(try Command.hello(name: name, token: nil), name.debugDescription)
        }
        XCTAssertThrowsError(try Command.hello(name: nil, token: "s e")) { error in
            XCTAssertEqual(error as? ClientError, .invalidToken(.forbiddenByte(0x20)))
            XCTAssertFalse("\(error)".contains("s e"), "a token is a secret: not repeated")
        }
    }

    /// Routing uses the wire's matcher (TestSupport's table covers it all).
    func testPatternMatching() {
        for (pattern, number, matches) in wildcardTable {
            XCTAssertEqual(Pattern(pattern).matches(number), matches, "\(pattern) vs \(number)")
        }
        XCTAssertTrue(Pattern("A.B").isExact)
        XCTAssertFalse(Pattern("A.*").isExact)
        XCTAssertFalse(Pattern(">").isExact)
        XCTAssertTrue(Pattern("a*.>x").isExact, "'a*' and '>x' are literal tokens")
        XCTAssertTrue(Pattern("caf\u{E9}").isExactly("caf\u{E9}"))
        XCTAssertFalse(Pattern("caf\u{E9}").isExactly("cafe\u{301}"), "GONE is matched byte for byte")
    }
}
