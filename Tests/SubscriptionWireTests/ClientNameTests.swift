import SubscriptionWire
import XCTest

/// The client-name rule (`HELLO name=`, `SUB ... from=`) and the token rule built on it.
final class ClientNameTests: XCTestCase {
    func testValidNames() throws {
        for name in ["alice", "a", "Ünïcödé", "lab-1.eu_west", "=x=", String(repeating: "n", count: 64)] {
            XCTAssertNoThrow(try ClientName.check(name), name)
            XCTAssertEqual(ClientName.validate(Array(name.utf8)[...]), name, name)
        }
    }

    func testInvalidNames() {
        let cases: [(String, ClientName.Problem)] = [
            ("", .empty),
            (String(repeating: "n", count: 65), .tooLong(65)),
            ("a b", .forbiddenByte(0x20)),
            ("a\nb", .forbiddenByte(0x0A)),
            ("a\r", .forbiddenByte(0x0D)),
            ("a\u{7F}", .forbiddenByte(0x7F)),
            ("\t", .forbiddenByte(0x09)),
        ]
        for (name, problem) in cases {
            XCTAssertThrowsError(try ClientName.check(name), name.debugDescription) { error in
                XCTAssertEqual(error as? ClientName.Problem, problem, name.debugDescription)
            }
            XCTAssertNil(ClientName.validate(Array(name.utf8)[...]), name.debugDescription)
        }
    }

    /// The length limit counts bytes, not Characters: 32 two-byte letters fit, 33 do not.
    func testLengthCountsBytes() {
        XCTAssertNoThrow(try ClientName.check(String(repeating: "é", count: 32)))
        XCTAssertThrowsError(try ClientName.check(String(repeating: "é", count: 33))) { error in
            XCTAssertEqual(error as? ClientName.Problem, .tooLong(66))
        }
    }

    func testRawBytesMustBeUTF8() {
        XCTAssertNil(ClientName.validate([0x61, 0xFF][...]))
        XCTAssertNil(ClientName.printableUTF8([0xC3, 0x28][...]))
        XCTAssertEqual(ClientName.printableUTF8(Array("\u{E9}".utf8)[...]), "\u{E9}")
    }

    func testTokenHasNoLengthLimit() {
        XCTAssertNoThrow(try ClientName.checkToken(String(repeating: "s", count: 1000)))
        XCTAssertThrowsError(try ClientName.checkToken("")) { XCTAssertEqual($0 as? ClientName.Problem, .empty) }
        XCTAssertThrowsError(try ClientName.checkToken("s e")) {
            XCTAssertEqual($0 as? ClientName.Problem, .forbiddenByte(0x20))
        }
    }

    func testDescriptionsSayWhatIsWrong() {
        XCTAssertEqual(ClientName.Problem.tooLong(65).description, "is 65 bytes long (at most 64)")
        XCTAssertEqual(ClientName.Problem.forbiddenByte(0x20).description, "holds a space")
    }
}
