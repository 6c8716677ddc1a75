import TestSupport
import XCTest

@testable import SubscriptionWebSocket

/// The incremental UTF-8 check against the standard library's decoder, on random bytes cut at random places.
final class UTF8StreamValidatorTests: XCTestCase {
    func testAgreesWithTheStandardLibrary() {
        var generator = SeededGenerator(seed: 11)
        let interesting: [UInt8] = [
            0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
            0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF,
        ]
        for round in 0..<20_000 {
            let count = Int.random(in: 0...12, using: &generator)
            let input = (0..<count).map { _ in interesting.randomElement(using: &generator)! }
            let isValid = String(validating: input, as: UTF8.self) != nil
            var validator = UTF8StreamValidator()
            var offset = 0
            var failed = false
            while offset < input.count && !failed {
                let end = min(input.count, offset + Int.random(in: 1...4, using: &generator))
                failed = input[offset..<end].withUnsafeBytes { validator.validate($0) } != nil
                offset = end
            }
            XCTAssertEqual(!failed && validator.isAtCharacterBoundary, isValid, "round \(round): \(input)")
            // A failure is reported at the first byte that no valid text could have there.
            if let bad = input.withUnsafeBytes({ bytes -> Int? in
                var fresh = UTF8StreamValidator()
                return fresh.validate(bytes)
            }) {
                XCTAssertNil(String(validating: input[...bad], as: UTF8.self), "round \(round)")
                let prefix = Array(input[..<bad])
                let extendable = String(validating: prefix, as: UTF8.self) != nil || Self.completes(prefix)
                XCTAssertTrue(extendable, "round \(round): \(prefix) is not a valid prefix")
            }
        }
    }

    /// True when `prefix` becomes valid UTF-8 with some continuation bytes added.
    static func completes(_ prefix: [UInt8]) -> Bool {
        for extra in 1...3 {
            for second: UInt8 in [0x80, 0x90, 0xA0, 0xBF] {
                if String(validating: prefix + [second] + Array(repeating: 0x80, count: extra - 1), as: UTF8.self)
                    != nil
                {
                    return true
                }
            }
        }
        return false
    }

    func testLongASCIIRunsAndTheirEnds() {
        for count in 0..<40 {
            var validator = UTF8StreamValidator()
            let text =
                [UInt8](repeating: 0x61, count: count) + [0xE2, 0x82, 0xAC] + [UInt8](repeating: 0x62, count: count)
            XCTAssertNil(text.withUnsafeBytes { validator.validate($0) })
            XCTAssertTrue(validator.isAtCharacterBoundary)
            var broken = UTF8StreamValidator()
            let bad = [UInt8](repeating: 0x61, count: count) + [0x80]
            XCTAssertEqual(bad.withUnsafeBytes { broken.validate($0) }, count)
        }
    }
}
