import SubscriptionWire
import XCTest

/// Names as keys compare bytes, where Swift's String compares canonical equivalence.
final class ExactNameTests: XCTestCase {
    /// "café" with a precomposed é (NFC), and with e + U+0301 (NFD): equal as Swift Strings, different as bytes.
    private let composed = "caf\u{E9}"
    private let decomposed = "cafe\u{301}"

    func testCanonicallyEquivalentSpellingsDiffer() {
        XCTAssertEqual(composed, decomposed, "precondition: Swift calls them equal")
        XCTAssertNotEqual(ExactName(composed), ExactName(decomposed))
        XCTAssertNotEqual(ExactName("\u{212B}"), ExactName("\u{C5}"), "Angstrom sign and A with ring above")
    }

    func testEqualBytesAreEqual() {
        XCTAssertEqual(ExactName(composed), ExactName(String(decoding: Array(composed.utf8), as: UTF8.self)))
        XCTAssertEqual(ExactName("SCIENCE.physics"), "SCIENCE.physics")
        XCTAssertEqual(ExactName(""), ExactName(""))
        XCTAssertNotEqual(ExactName("a"), ExactName("ab"))
        XCTAssertEqual(ExactName(decomposed).string.utf8.count, 6, "the name is kept as given, never normalized")
        XCTAssertEqual(ExactName(decomposed).description, decomposed)
    }

    func testHashIsConsistentWithEquality() {
        // A String built from the same bytes another way (a substring, concatenation) hashes alike.
        let pieces = ExactName(String("xcafe\u{301}".dropFirst()))
        let joined = ExactName("caf" + "e" + "\u{301}")
        XCTAssertEqual(pieces, joined)
        XCTAssertEqual(pieces.hashValue, joined.hashValue)
        XCTAssertEqual(ExactName(decomposed).hashValue, pieces.hashValue)
        XCTAssertNotEqual(ExactName(composed).hashValue, ExactName(decomposed).hashValue)
        XCTAssertEqual(Set([ExactName(composed), ExactName(decomposed), pieces, joined]).count, 2)
    }

    func testOrderIsByteOrder() {
        let names = ["b", "a.b", "a", "Z", "\u{E9}", "e\u{301}", "ab", "é.x", "\u{10000}", "\u{FFFF}"]
        let sorted = names.map { ExactName($0) }.sorted().map(\.string)
        let byBytes = names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        XCTAssertEqual(sorted.map { Array($0.utf8) }, byBytes.map { Array($0.utf8) })
        XCTAssertEqual(sorted.first, "Z", "uppercase ASCII sorts before lowercase")
        XCTAssertTrue(ExactName("a") < ExactName("a.b"), "a prefix sorts first")
        XCTAssertTrue(ExactName(decomposed) < ExactName(composed), "0x65 0xCC... before 0xC3 0xA9")
        XCTAssertFalse(ExactName("a") < ExactName("a"))
    }

    func testADictionaryKeepsBothSpellings() {
        var values: [ExactName: Int] = [:]
        values[ExactName(composed)] = 1
        values[ExactName(decomposed)] = 2
        XCTAssertEqual(values.count, 2)
        XCTAssertEqual(values[ExactName(composed)], 1)
        XCTAssertEqual(values[ExactName(decomposed)], 2)
        values[ExactName(decomposed)] = nil
        XCTAssertEqual(values, [ExactName(composed): 1])

        var strings: [String: Int] = [:]
        strings[composed] = 1
        strings[decomposed] = 2
        XCTAssertEqual(strings.count, 1, "what ExactName is for: a String key merges them")
    }
}
