import Foundation
import SubscriptionSystem
import XCTest

/// `UTCTimestamp.now()`: ISO 8601, UTC, milliseconds, and the same instant as the system clock.
final class UTCTimestampTests: XCTestCase {
    func testTheFormatAndTheInstant() throws {
        let before = Date()
        let text = UTCTimestamp.now()
        let after = Date()
        XCTAssertNotNil(text.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression), text)
        let parser = ISO8601DateFormatter()
        parser.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let parsed = try XCTUnwrap(parser.date(from: text), text)
        XCTAssertGreaterThanOrEqual(parsed.timeIntervalSince(before), -0.002)
        XCTAssertLessThanOrEqual(parsed.timeIntervalSince(after), 0.002)
    }
}
