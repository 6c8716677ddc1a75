import SubscriptionCenter
import XCTest

/// Names are byte strings (docs/PROTOCOL.md, Words): Swift's String equality, which treats canonically equivalent
/// spellings as equal and splits on Characters, must not leak into the center.
final class ByteExactNameTests: XCTestCase {
    /// "café" with a precomposed é, and with e + U+0301: equal as Swift Strings, different as bytes.
    private let composed = "caf\u{E9}"
    private let decomposed = "cafe\u{301}"

    func testCanonicallyEquivalentSpellingsAreDifferentNumbers() throws {
        XCTAssertEqual(composed, decomposed, "precondition: Swift calls them equal")
        let center = SubscriptionCenter<String>()
        XCTAssertTrue(try center.create(composed))
        XCTAssertTrue(try center.create(decomposed), "a different byte string is a new number, not 'exists'")
        XCTAssertEqual(center.numberCount, 2)

        let listener = Probe("listener")
        try center.add(listener, to: decomposed)
        XCTAssertEqual(try center.send("to composed", to: composed), 0)
        XCTAssertEqual(try center.send("to decomposed", to: decomposed), 1)
        XCTAssertEqual(listener.received.map(\.number).map { Array($0.utf8) }, [Array(decomposed.utf8)])
    }

    func testTokenStartingWithACombiningMarkIsSplitAtTheDot() throws {
        // "A." followed by U+0301: as Characters the dot and the mark are one grapheme; as bytes they are a dot
        // and the start of the second token.
        let number = "A.\u{301}x"
        let center = SubscriptionCenter<String>()
        try center.create(number)
        let star = Probe("star")
        let rest = Probe("rest")
        try center.add(star, to: "A.*")
        try center.add(rest, to: "A.>")
        XCTAssertEqual(try center.send("hello", to: number), 2)
        XCTAssertEqual(star.received.count, 1)
        XCTAssertEqual(rest.received.count, 1)
        XCTAssertEqual(star.received.map(\.number).map { Array($0.utf8) }, [Array(number.utf8)])
    }

    func testFromFilterComparesBytes() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let listener = Probe("listener")
        try center.add(listener, to: "N", from: composed)
        XCTAssertEqual(try center.send("by decomposed", to: "N", from: decomposed), 0)
        XCTAssertEqual(try center.send("by composed", to: "N", from: composed), 1)
    }
}
