import XCTest

@testable import SubscriptionClient

/// ``ClusterStats``, ``ClusterNodeReport`` and ``FlatJSON``: what `subctl stats --cluster` makes of the
/// `$SYS.cluster.node` events.
final class ClusterStatsSumTests: XCTestCase {
    private func report(_ node: String, _ state: String, _ stats: [(String, String)]) -> ClusterNodeReport {
        let head = [("node", node), ("state", state), ("age_seconds", "1"), ("nodes", "3")]
        return ClusterNodeReport(fields: (head + stats).map { ClusterStatsEntry($0.0, $0.1) })!
    }

    func testCountersAreSummedInTheirFirstOrderSkippingVersionAndUptime() {
        let reports = [
            report(
                "node1", "up", [("version", "0.1.0"), ("uptime_seconds", "9"), ("connections", "2"), ("denied", "1")]),
            report(
                "node2", "stale",
                [
                    ("version", "0.1.0"), ("uptime_seconds", "5"), ("connections", "3"),
                    ("cluster_received", "7"), ("denied", "4"),
                ]),
        ]
        XCTAssertEqual(
            ClusterStats.totals(of: reports),
            [
                ClusterStatsEntry("connections", "5"), ClusterStatsEntry("denied", "5"),
                ClusterStatsEntry("cluster_received", "7"),
            ])
    }

    func testALostNodeIsListedButNotSummed() {
        let reports = [
            report("node1", "up", [("connections", "2")]),
            report("node3", "lost", [("connections", "40")]),
        ]
        XCTAssertEqual(ClusterStats.totals(of: reports), [ClusterStatsEntry("connections", "2")])
    }

    func testAReportNeedsItsNodeStateAgeAndCount() {
        XCTAssertNil(ClusterNodeReport(fields: [ClusterStatsEntry("node", "n"), ClusterStatsEntry("state", "up")]))
        let report = report("node2", "up", [("connections", "1")])
        XCTAssertEqual(report.node, "node2")
        XCTAssertEqual(report.nodes, 3)
        XCTAssertEqual(report.ageSeconds, 1)
        XCTAssertEqual(report.stats, [ClusterStatsEntry("connections", "1")])
    }

    func testAnEventIsReadInOrderWithEscapes() {
        let line = #"{"event":"cluster.node","node":"n\"1\u00e9","age_seconds":0, "ok":true,"x":null}"#
        XCTAssertEqual(
            FlatJSON.fields(of: line),
            [
                ClusterStatsEntry("event", "cluster.node"), ClusterStatsEntry("node", "n\"1é"),
                ClusterStatsEntry("age_seconds", "0"), ClusterStatsEntry("ok", "true"), ClusterStatsEntry("x", "null"),
            ])
        XCTAssertEqual(FlatJSON.fields(of: "{}"), [])
        XCTAssertNil(FlatJSON.fields(of: #"{"a":1"#))
        XCTAssertNil(FlatJSON.fields(of: #"{"a":1} x"#))
        XCTAssertNil(FlatJSON.fields(of: #"{"a":{"b":1}}"#))
    }
}
