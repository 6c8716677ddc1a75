import XCTest

@testable import SubscriptionCluster

/// The dedupe of copies that overlapping upstream subscriptions bring: per origin, a counter not above the last
/// accepted one is a copy.
final class OriginCountersTests: XCTestCase {
    func testACopyOfAnAcceptedPublicationIsDroppedPerOrigin() {
        var origins = OriginCounters()
        XCTAssertTrue(origins.accept(origin: "a-1", counter: 1))
        XCTAssertFalse(origins.accept(origin: "a-1", counter: 1), "the second subscription's copy")
        XCTAssertTrue(origins.accept(origin: "b-1", counter: 1), "another origin's counter is its own")
        XCTAssertTrue(origins.accept(origin: "a-1", counter: 2))
        XCTAssertTrue(origins.accept(origin: "a-1", counter: 5), "counters may skip (publications nobody here wanted)")
        XCTAssertFalse(origins.accept(origin: "a-1", counter: 4))
    }
}
