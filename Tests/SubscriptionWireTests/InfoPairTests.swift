import SubscriptionWire
import TestSupport
import XCTest

/// The info-pair rules of docs/PROTOCOL.md, Info pairs.
final class InfoPairTests: XCTestCase {
    func testValidKeys() {
        for key in ["unit", "a", "Z", "price.eur", "x-y_z", "a1", "A.b-c_9", String(repeating: "k", count: 64)] {
            XCTAssertNoThrow(try InfoPair.checkKey(key.utf8), key)
        }
    }

    func testInvalidKeys() {
        let bad = [
            "", "1abc", "_a", "-a", ".a", "a b", "a=b", "ké", "a/b", "a:b", "a%20", String(repeating: "k", count: 65),
            "a\n", "$sys",
        ]
        for key in bad {
            XCTAssertThrowsError(try InfoPair.checkKey(key.utf8), key.debugDescription) { error in
                XCTAssertEqual(error as? InfoPair.Problem, .badKey, key.debugDescription)
            }
        }
    }

    /// The server's own keys, and (by the key rule, which needs a letter first) every `$` key.
    func testReservedKeys() {
        for key in ["from", "rev", "group"] {
            XCTAssertThrowsError(try InfoPair.checkKey(key.utf8), key) { error in
                XCTAssertEqual(error as? InfoPair.Problem, .reservedKey(key), key)
            }
        }
        for key in ["From", "fromage", "revision", "groups", "fro"] {
            XCTAssertNoThrow(try InfoPair.checkKey(key.utf8), "\(key) is not reserved (keys are compared by bytes)")
        }
        XCTAssertThrowsError(try InfoPair.check([InfoPair(key: "$rev", value: "1")]))
    }

    func testValues() {
        for value in ["EUR", "12", "a%20b", "ünï", "!#&'()*+,/:;?@[]", String(repeating: "v", count: 1024)] {
            XCTAssertNoThrow(try InfoPair.checkValue(value.utf8), value)
        }
        for value in ["", "a b", "a=b", "=", "a\tb", "a\n", "\u{7F}", String(repeating: "v", count: 1025)] {
            XCTAssertThrowsError(try InfoPair.checkValue(value.utf8), value.debugDescription) { error in
                XCTAssertEqual(error as? InfoPair.Problem, .badValue, value.debugDescription)
            }
        }
    }

    func testCount() {
        let sixteen = (1...16).map { InfoPair(key: "k\($0)", value: "v") }
        XCTAssertNoThrow(try InfoPair.check(sixteen))
        XCTAssertNoThrow(try InfoPair.check([]))
        XCTAssertThrowsError(try InfoPair.check(sixteen + [InfoPair(key: "k17", value: "v")])) { error in
            XCTAssertEqual(error as? InfoPair.Problem, .tooMany(17))
        }
    }

    func testDuplicateKeys() {
        let pairs = [
            InfoPair(key: "unit", value: "EUR"), InfoPair(key: "price", value: "1"),
            InfoPair(key: "unit", value: "USD"),
        ]
        XCTAssertThrowsError(try InfoPair.check(pairs)) { error in
            XCTAssertEqual(error as? InfoPair.Problem, .duplicateKey("unit"))
        }
        XCTAssertNoThrow(
            try InfoPair.check([InfoPair(key: "unit", value: "a"), InfoPair(key: "Unit", value: "b")]),
            "keys differ by case")
    }

    func testCheckOfAListChecksEachPair() {
        XCTAssertThrowsError(
            try InfoPair.check([InfoPair(key: "ok", value: "1"), InfoPair(key: "bad key", value: "1")]))
        XCTAssertThrowsError(try InfoPair.check([InfoPair(key: "ok", value: "a b")])) { error in
            XCTAssertEqual(error as? InfoPair.Problem, .badValue)
        }
    }

    func testPercentEncoding() {
        XCTAssertEqual(InfoPair.percentEncoded("EUR"), "EUR", "a value that needs nothing is sent as it is")
        XCTAssertEqual(InfoPair.percentEncoded("a b=c%"), "a%20b%3Dc%25")
        XCTAssertEqual(InfoPair.percentEncoded("line\nnext\u{7F}"), "line%0Anext%7F")
        XCTAssertEqual(InfoPair.percentEncoded("ünï"), "ünï", "UTF-8 above ASCII needs no encoding")
        XCTAssertEqual(InfoPair.percentDecoded("a%20b%3dc%25"), "a b=c%", "lower-case hex decodes too")
        for bad in ["%", "%2", "%zz", "a%2x", "%FF"] {
            XCTAssertNil(InfoPair.percentDecoded(bad), "\(bad) is not a decodable value")
        }
    }

    /// Any text, encoded, is a valid value (when not too long) and decodes back to itself.
    func testPercentEncodingRoundTrip() throws {
        let pieces = [
            " ", "=", "%", "\n", "\r", "\t", "\u{7F}", "\u{0}", "a", "Z", "é", "e\u{301}", "\u{1F600}", "%41",
        ]
        for seed in UInt64(1)...50 {
            var random = SeededGenerator(seed: seed)
            let text = (0..<Int.random(in: 1...20, using: &random)).map { _ in pieces.randomElement(using: &random)! }
                .joined()
            let encoded = InfoPair.percentEncoded(text)
            XCTAssertNoThrow(try InfoPair.checkValue(encoded.utf8), "seed \(seed): \(encoded)")
            XCTAssertEqual(InfoPair.percentDecoded(encoded).map { Array($0.utf8) }, Array(text.utf8), "seed \(seed)")
        }
    }

    func testDescriptionsNameTheRule() {
        XCTAssertTrue(InfoPair.Problem.badKey.description.contains("starting with a letter"))
        XCTAssertTrue(InfoPair.Problem.reservedKey("rev").description.contains("'rev'"))
        XCTAssertTrue(InfoPair.Problem.tooMany(17).description.contains("at most 16"))
    }
}
