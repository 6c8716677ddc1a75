import SubscriptionNATS
import XCTest

@testable import SubscriptionCluster

/// ``ClusterBridge/writeFailed(_:)``: a bucket write that failed answers "nothing was changed" only when that is
/// known; one whose answer did not come in time may have been stored (ClusterFaultTests saw it after a leader was
/// killed), and says so.
final class WriteFailedTests: XCTestCase {
    func testATimedOutWriteDoesNotClaimNothingChanged() {
        let error = ClusterBridge.writeFailed(.client(.timeout))
        XCTAssertEqual(error.code, .limit)
        XCTAssertEqual(
            error.message,
            "the cluster did not answer in time (timed out); the change may have been made, check before trying again")
    }

    func testOtherFailuresChangedNothing() {
        for failure: JetStreamError in [.client(.noResponders), .client(.notConnected), .streamNotFound] {
            let error = ClusterBridge.writeFailed(failure)
            XCTAssertEqual(error.code, .limit)
            XCTAssertEqual(
                error.message, "the cluster state is unavailable (\(failure)); nothing was changed, try again")
        }
    }
}
