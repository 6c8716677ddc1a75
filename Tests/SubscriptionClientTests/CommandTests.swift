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
    }

    func testWordsThatCannotBeSentAreRefused() {
        let bad = ["", "A B", "A\nPUB", "A\r", "A\u{7F}", String(repeating: "x", count: 201)]
        for word in bad {
            XCTAssertThrowsError(try Command.create(word), word.debugDescription) { error in
                guard case .invalidArgument = error as? ClientError else { return XCTFail("\(error)") }
            }
        }
        for word in ["", "a b", "a\nb"] {
            XCTAssertThrowsError(try Command.sub("A", from: word), word.debugDescription)
        }
        XCTAssertNoThrow(try Command.create(String(repeating: "x", count: 200)))
        XCTAssertThrowsError(try Command.hello(name: "a b", token: nil))
    }

    func testPatternMatching() {
        let table: [(String, String, Bool)] = [
            ("SCIENCE", "SCIENCE", true), ("SCIENCE", "SCIENCE.physics", false), ("SCIENCE", "science", false),
            ("SCIENCE.*", "SCIENCE.physics", true), ("SCIENCE.*", "SCIENCE", false),
            ("SCIENCE.*", "SCIENCE.a.b", false), ("*.physics", "SCIENCE.physics", true),
            ("SCIENCE.>", "SCIENCE.a.b", true), ("SCIENCE.>", "SCIENCE", false), (">", "ANY.thing", true),
            (">", "X", true), ("*", "X", true), ("*", "X.Y", false), ("*.>", "A.B", true), ("*.>", "A", false),
            ("A.*.C", "A.B.C", true), ("A.*.C", "A.B.D", false),
        ]
        for (pattern, number, matches) in table {
            XCTAssertEqual(Pattern(pattern).matches(number), matches, "\(pattern) vs \(number)")
        }
        XCTAssertTrue(Pattern("A.B").isExact)
        XCTAssertFalse(Pattern("A.*").isExact)
    }
}
