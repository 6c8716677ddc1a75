import Foundation
import SubscriptionWire
import XCTest

/// `JSONText.quoted`: whatever the text, the result is one JSON string that decodes back to it.
final class JSONTextTests: XCTestCase {
    func testEscapesAndRoundTrips() throws {
        XCTAssertEqual(JSONText.quoted("a\"b\\c\nd\te\r\u{1}\u{7F}é"), #""a\"b\\c\nd\te\r\u0001\u007fé""#)
        var texts = ["", "plain", "\u{0}", "\u{1F600} and \u{301}", "</script>"]
        texts += (0..<128).map { String(UnicodeScalar(UInt8($0))) }
        for text in texts {
            let quoted = JSONText.quoted(text)
            XCTAssertFalse(quoted.contains("\n"), "one line")
            let decoded = try JSONSerialization.jsonObject(with: Data("[\(quoted)]".utf8)) as? [String]
            XCTAssertEqual(decoded, [text], quoted)
        }
    }
}
