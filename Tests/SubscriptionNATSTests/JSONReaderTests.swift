import XCTest

@testable import SubscriptionNATS

/// The hand-written JSON reader and writer the client uses instead of Foundation.
final class JSONReaderTests: XCTestCase {
    func testValuesOfEveryKind() throws {
        let value = try JSONReader.parse(#" {"a": [1, -2.5e3, true, false, null], "b": {"c": "d"}, "big": 18446744073709551615} "#)
        XCTAssertEqual(value["a"], .array([.number("1"), .number("-2.5e3"), .bool(true), .bool(false), .null]))
        XCTAssertEqual(value["b"]?["c"]?.string, "d")
        XCTAssertEqual(value["big"]?.uint64, UInt64.max)
        XCTAssertNil(value["big"]?.int)
        XCTAssertNil(value["missing"])
        XCTAssertEqual(try JSONReader.parse("[]"), .array([]))
        XCTAssertEqual(try JSONReader.parse("{}"), .object([:]))
    }

    func testStringEscapesAndUnicode() throws {
        let value = try JSONReader.parse(#""a\"b\\c\/d\n\t\u00e9\ud83d\ude00é\u0000""#)
        XCTAssertEqual(value.string, "a\"b\\c/d\n\té😀é\u{0}")
        // Go's encoder writes '>' as \u003e (seen in the stream's subjects).
        XCTAssertEqual(try JSONReader.parse(#""$KV.b.\u003e""#).string, "$KV.b.>")
    }

    func testMalformedJSONIsRefusedWithWhereItWentWrong() {
        let bad: [(String, String)] = [
            ("", "expected a value at byte 0"), ("{", "expected a member name at byte 1"),
            (#"{"a" 1}"#, "expected ':' at byte 5"), ("[1,]", "expected a value at byte 3"), ("01", "unexpected bytes after the value at byte 1"),
            ("-", "expected a digit at byte 1"), ("1.", "expected a digit after '.' at byte 2"), ("tru", "expected true at byte 0"),
            (#""abc"#, "unterminated string at byte 4"), ("\"a\u{01}\"", "control byte in a string at byte 2"),
            (#""\x""#, "invalid escape at byte 3"), (#""\ud800x""#, "a high surrogate without its low one at byte 7"),
            (#""\udc00""#, "a lone low surrogate at byte 7"), ("[1] x", "unexpected bytes after the value at byte 4"),
        ]
        for (text, reason) in bad {
            XCTAssertThrowsError(try JSONReader.parse(text), text) {
                XCTAssertEqual(($0 as? JSONReader.Failure)?.description, reason, text)
            }
        }
    }

    func testNestingIsBounded() {
        XCTAssertNoThrow(try JSONReader.parse(String(repeating: "[", count: 64) + String(repeating: "]", count: 64)))
        XCTAssertThrowsError(try JSONReader.parse(String(repeating: "[", count: 65) + String(repeating: "]", count: 65)))
        XCTAssertThrowsError(try JSONReader.parse(String(repeating: "[", count: 100_000)))
    }

    func testWriterOutputReadsBack() throws {
        var nested = JSONWriter()
        nested.add("src", "$KV.b.>")
        var writer = JSONWriter()
        writer.add("name", "KV_\"b\"")
        writer.add("n", -1)
        writer.add("seq", UInt64.max)
        writer.add("ok", true)
        writer.add("subjects", strings: ["a", "b\n"])
        writer.add("republish", object: nested)
        writer.addIfPresent("none", nil)
        let value = try JSONReader.parse(writer.result)
        XCTAssertEqual(value, .object([
            "name": .string("KV_\"b\""), "n": .number("-1"), "seq": .number("18446744073709551615"), "ok": .bool(true),
            "subjects": .array([.string("a"), .string("b\n")]), "republish": .object(["src": .string("$KV.b.>")]),
        ]))
    }
}
