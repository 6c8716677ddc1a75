import SubscriptionCenter
import XCTest

/// The center refuses invalid names with the wire rule's problem (the rules themselves: SubscriptionWireTests).
final class CenterNameTests: XCTestCase {
    func testCenterReportsTheProblem() {
        let center = SubscriptionCenter<String>()
        let probe = Probe("p")
        XCTAssertThrowsError(try center.create("A.*")) { error in
            XCTAssertEqual(error as? CenterError, .invalidName("A.*", .wildcardInNumber))
        }
        XCTAssertThrowsError(try center.add(probe, to: "A.>.B")) { error in
            XCTAssertEqual(error as? CenterError, .invalidName("A.>.B", .fullWildcardNotLast))
        }
        XCTAssertThrowsError(try center.list(matching: "A..B")) { error in
            XCTAssertEqual(error as? CenterError, .invalidName("A..B", .emptyToken))
        }
        XCTAssertFalse(center.remove(probe, from: "A..B"), "an invalid pattern is simply not subscribed")
        XCTAssertEqual(center.numberCount, 0)
        XCTAssertEqual(center.subscriptionCount, 0)
    }

    func testErrorDescriptions() {
        XCTAssertEqual(CenterError.notFound("X").description, "no such number: X")
        XCTAssertEqual(
            CenterError.invalidName("A B", .forbiddenByte(0x20)).description,
            "invalid name 'A B': it holds a space")
        XCTAssertEqual(
            CenterError.limit("at most 2 numbers may exist").description,
            "limit reached: at most 2 numbers may exist")
    }
}
