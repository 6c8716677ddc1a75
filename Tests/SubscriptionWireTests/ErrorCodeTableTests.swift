import SubscriptionWire
import XCTest

/// The error codes are exactly those of docs/PROTOCOL.md, Error codes, spelled as on the wire.
final class ErrorCodeTableTests: XCTestCase {
    func testCodesAreTheContractsTable() {
        XCTAssertEqual(
            Set(ErrorCode.allCases.map(\.rawValue)),
            ["PROTO", "UNKNOWN", "NAME", "NOTFOUND", "TOOBIG", "AUTH", "DENIED", "LIMIT"])
        XCTAssertEqual(ErrorCode(rawValue: "NOTFOUND"), .notFound)
        XCTAssertNil(ErrorCode(rawValue: "notfound"), "codes are compared as sent, upper case")
    }
}
