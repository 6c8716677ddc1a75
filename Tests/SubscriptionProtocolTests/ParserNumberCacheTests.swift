import SubscriptionWire
import XCTest

@testable import SubscriptionProtocol

/// A `PUB` to a number published to lately reuses its checked `String` (``NumberCache``): the reuse must never hand
/// out another number's bytes or skip the check of a number that differs.
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

    /// 100 numbers in turn (the `wide` benchmark) all stay cached; 1,000 in turn overflow the table, and every
    /// lookup still gives the right String or none.
    func testTheCacheHoldsManyNumbersAndNeverAnswersWrong() {
        for count in [100, 1000] {
            let numbers = (0..<count).map { "bench.12345.w\($0)" }
            var cache = NumberCache()
            for number in numbers { cache.insert(number) }
            var hits = 0
            for _ in 0..<3 {
                for number in numbers {
                    let bytes = Array(number.utf8)[...]
                    if let found = cache.lookUp(bytes) {
                        XCTAssertEqual(Array(found.utf8), Array(bytes))
                        hits += 1
                    } else {
                        cache.insert(number)
                    }
                }
            }
            if count == 100 { XCTAssertEqual(hits, 300, "every number stays") }
            XCTAssertNil(cache.lookUp(Array("bench.12345.x".utf8)[...]))
            XCTAssertNil(cache.lookUp([]), "never the empty free-slot marker")
        }
    }

    /// A pipeline that publishes to 600 numbers in turn, twice, through the parser in every feed mode: each PUB
    /// comes out with its own number's bytes.
    func testManyNumbersThroughTheParser() {
        let numbers = (0..<600).map { "n\($0 % 7).\($0)" }
        var input: [UInt8] = []
        for number in numbers + numbers { input += bytes("PUB \(number) 1\nx\n") }
        let results = parseInAllModes(input, seeds: 0..<3, byteByByte: false)
        XCTAssertEqual(numberBytes(results), (numbers + numbers).map { Array($0.utf8) })
    }
}

extension NumberCache {
    /// What the parser asks (``CommandParser/cachedNumber(_:)``): the last number, then the table.
    fileprivate func lookUp(_ bytes: ArraySlice<UInt8>) -> String? {
        NumberCache.same(bytes, lastBytes) ? last : number(inTableMatching: bytes)
    }
}
