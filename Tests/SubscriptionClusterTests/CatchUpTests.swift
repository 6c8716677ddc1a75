import XCTest

@testable import SubscriptionCluster

/// ``CatchUp``: a node answers retained values only once both watches caught up since its last connect.
final class CatchUpTests: XCTestCase {
    func testIncompleteUntilBothWatchesCaughtUp() {
        var catchUp = CatchUp()
        XCTAssertFalse(catchUp.isComplete)
        XCTAssertEqual(catchUp.reason?.hasPrefix("the cluster's numbers are not read yet"), true)
        catchUp.caughtUp(.retained)
        XCTAssertFalse(catchUp.isComplete, "the numbers bucket is not read yet")
        XCTAssertEqual(catchUp.reason?.hasPrefix("the cluster's numbers are not read yet"), true)
        catchUp.caughtUp(.numbers)
        XCTAssertTrue(catchUp.isComplete)
        XCTAssertNil(catchUp.reason)
    }

    func testTheRetainedWatchIsNamedWhenOnlyItIsBehind() {
        var catchUp = CatchUp()
        catchUp.caughtUp(.numbers)
        XCTAssertEqual(catchUp.reason?.hasPrefix("the cluster's retained values are not read yet"), true)
        XCTAssertEqual(catchUp.reason?.hasSuffix("try again"), true)
    }

    func testADisconnectMakesItIncompleteUntilBothReloaded() {
        var catchUp = CatchUp()
        catchUp.caughtUp(.numbers)
        catchUp.caughtUp(.retained)
        catchUp.disconnected()
        XCTAssertFalse(catchUp.isComplete)
        catchUp.caughtUp(.numbers)
        XCTAssertFalse(catchUp.isComplete, "the retained watch has not reloaded yet")
        catchUp.caughtUp(.retained)
        XCTAssertTrue(catchUp.isComplete)
    }
}
