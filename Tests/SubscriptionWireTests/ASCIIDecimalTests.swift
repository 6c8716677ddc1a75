import SubscriptionWire
import XCTest

/// ``ASCIIDecimal``: digits only, one to the most allowed, never an overflow.
final class ASCIIDecimalTests: XCTestCase {
    private func value(_ text: String, maxDigits: Int = ASCIIDecimal.maxDigits) -> UInt64? {
        ASCIIDecimal.value(of: Array(text.utf8), maxDigits: maxDigits)
    }

    func testDigitsAreReadAsTheirNumber() {
        XCTAssertEqual(value("0"), 0)
        XCTAssertEqual(value("7"), 7)
        XCTAssertEqual(value("0042"), 42)
        XCTAssertEqual(value("1234567890"), 1_234_567_890)
        XCTAssertEqual(value("9999999999999999999"), 9_999_999_999_999_999_999)
    }

    func testAnythingButOneToTheMostDigitsIsRefused() {
        for text in ["", " 1", "1 ", "+1", "-1", "1_000", "12a", "a", "١", "1.5", "0x10"] {
            XCTAssertNil(value(text), text)
        }
        // Twenty digits could overflow a UInt64 (18446744073709551616 is 2^64): refused whatever they are, the
        // limit asked for above 19 is 19.
        XCTAssertNil(value("18446744073709551616"))
        XCTAssertNil(value("00000000000000000001"))
        XCTAssertNil(value("00000000000000000001", maxDigits: 40))
    }

    func testTheLimitAskedForCounts() {
        XCTAssertEqual(value("123456789", maxDigits: 9), 123_456_789)
        XCTAssertNil(value("1234567890", maxDigits: 9))
        XCTAssertNil(value("1", maxDigits: 0))
    }

    func testSlicesAndViewsAreReadInPlace() {
        let line = Array("MSG a 12 345\r\n".utf8)
        XCTAssertEqual(ASCIIDecimal.value(of: line[6..<8]), 12)
        XCTAssertEqual(ASCIIDecimal.value(of: line[9..<12]), 345)
        XCTAssertEqual(ASCIIDecimal.value(of: "node 17".utf8.dropFirst(5)), 17)
    }

    /// Every number up to 19 digits reads back as written (random ones, and each power of ten's neighbours).
    func testNumbersReadBackAsWritten() {
        var generator = SystemRandomNumberGenerator()
        let largest: UInt64 = 9_999_999_999_999_999_999
        var samples: [UInt64] = (0..<2_000).map { _ in UInt64.random(in: 0...largest, using: &generator) }
        var power: UInt64 = 1
        for _ in 0..<19 {
            samples += [power - 1, power, power + 1]
            if power <= UInt64.max / 10 { power *= 10 }
        }
        for number in samples where number <= largest {
            XCTAssertEqual(value(String(number)), number)
        }
    }

    /// What ``ASCIIDecimal/append(_:to:)`` writes is the number's decimal spelling, after what was there, for every
    /// width (UInt64.max's 20 digits included), and reads back.
    func testAppendWritesTheDecimalSpelling() {
        var samples: [UInt64] = [0, 9, 10, UInt64.max, UInt64.max - 1]
        var power: UInt64 = 1
        for _ in 0..<19 {
            samples += [power - 1, power, power + 1]
            power *= 10
        }
        samples += (0..<2_000).map { _ in UInt64.random(in: 0...UInt64.max) }
        for number in samples {
            var bytes = Array("x ".utf8)
            ASCIIDecimal.append(number, to: &bytes)
            XCTAssertEqual(String(decoding: bytes, as: UTF8.self), "x \(number)")
            if number <= largestReadable { XCTAssertEqual(ASCIIDecimal.value(of: bytes.dropFirst(2)), number) }
        }
    }

    private let largestReadable: UInt64 = 9_999_999_999_999_999_999
}
