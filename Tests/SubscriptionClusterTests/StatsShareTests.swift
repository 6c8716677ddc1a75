import XCTest

@testable import SubscriptionCluster

/// ``StatsShare``: a node's STATS on `subd.stats` come back as they went.
final class StatsShareTests: XCTestCase {
    func testAReportComesBackWithItsNode() {
        let payload = StatsShare.encode(node: "node2", lines: ["version 0.1.0", "connections 3"])
        XCTAssertEqual(StatsShare.decode(payload)?.node, "node2")
        XCTAssertEqual(StatsShare.decode(payload)?.lines, ["version 0.1.0", "connections 3"])
        XCTAssertNil(StatsShare.decode(Array("connections 3".utf8)))
        XCTAssertNil(StatsShare.decode(Array("node ".utf8)))
    }
}
