import SubscriptionWire
import XCTest

@testable import SubscriptionProtocol

/// A `PUB` to the same number as the previous one reuses its checked `String` (``CommandParser/lastNumber``): the
/// reuse must never hand out another number's bytes or skip the check of a number that differs.
final class ParserNumberCacheTests: XCTestCase {
    /// The numbers of the PUBs in `results`, as bytes (Command's `==` compares Strings, which merges canonically
    /// equivalent spellings), nil for a failure.
    private func numberBytes(_ results: [ParseResult]) -> [[UInt8]?] {
        results.map { result in
            if case .success(.publish(let number, _, _)) = result { return Array(number.utf8) }
            return nil
        }
    }

    func testSameLengthOtherBytesAreNotReused() {
        let input = bytes("PUB AB.C 1\nx\nPUB AB.D 1\nx\nPUB ab.c 1\nx\nPUB AB.C 1\nx\nPUB AB.C 1\nx\n")
        let results = parseInAllModes(input)
        XCTAssertEqual(numberBytes(results), ["AB.C", "AB.D", "ab.c", "AB.C", "AB.C"].map { Array($0.utf8) })
    }

    /// An invalid number of the same length right after a valid one is still checked, and does not replace it.
    func testAnInvalidNumberIsStillRefused() {
        let input = bytes("PUB AB.C 1\nx\nPUB A..C 1\nx\nPUB AB.* 1\nx\nPUB AB.C 1\nx\n")
        let results = parseInAllModes(input)
        XCTAssertEqual(results.count, 4)
        XCTAssertEqual(numberBytes([results[0]]), [Array("AB.C".utf8)])
        XCTAssertEqual(failureCode(results[1]), .name)
        XCTAssertEqual(failureCode(results[2]), .name)
        XCTAssertEqual(numberBytes([results[3]]), [Array("AB.C".utf8)])
    }

    /// Two spellings of "été" that Swift calls equal but whose bytes differ (NFC is 5 bytes, NFD 7; and two NFC
    /// names of equal length) each come out with their own bytes.
    func testCanonicallyEquivalentSpellingsKeepTheirBytes() {
        let composed = "\u{E9}t\u{E9}"
        let decomposed = "e\u{301}te\u{301}"
        var input: [UInt8] = []
        for number in [composed, decomposed, composed, "\u{E9}t\u{E8}"] {
            input += bytes("PUB \(number) 2\nhi\n")
        }
        let results = parseInAllModes(input)
        XCTAssertEqual(numberBytes(results), [composed, decomposed, composed, "\u{E9}t\u{E8}"].map { Array($0.utf8) })
    }

    /// A number longer than a small string (heap storage) is reused as well as a short one, with its bytes intact
    /// after the parser's buffer is compacted and refilled.
    func testLongNumbersAcrossCompaction() {
        let long = "SCIENCE." + String(repeating: "physics.", count: 8) + "end"
        var input: [UInt8] = []
        for index in 0..<200 { input += bytes("PUB \(long) 3\n\(100 + index)\n") }
        let results = parseInAllModes(input, seeds: 0..<5)
        XCTAssertEqual(results.count, 200)
        XCTAssertTrue(numberBytes(results).allSatisfy { $0 == Array(long.utf8) })
    }
}
