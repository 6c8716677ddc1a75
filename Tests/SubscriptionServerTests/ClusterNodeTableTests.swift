import XCTest

@testable import SubscriptionServer

/// ``ClusterNodeTable``: each node's latest STATS, and its state from the age of that report.
final class ClusterNodeTableTests: XCTestCase {
    func testNodesAreListedByNameWithTheirStateFromTheirAge() {
        let start = ContinuousClock.now
        var table = ClusterNodeTable()
        table.record("node2", lines: ["connections 1"], at: start)
        table.record("node1", lines: ["connections 5"], at: start)
        table.record("node3", lines: ["connections 9"], at: start)
        table.record("node1", lines: ["connections 6"], at: start + .seconds(25))
        table.record("node2", lines: ["connections 2"], at: start + .seconds(15))
        let rows = table.rows(now: start + .seconds(31), interval: 5)
        XCTAssertEqual(
            rows,
            [
                .init(node: "node1", state: .up, ageSeconds: 6, lines: ["connections 6"]),
                .init(node: "node2", state: .stale, ageSeconds: 16, lines: ["connections 2"]),
                .init(node: "node3", state: .lost, ageSeconds: 31, lines: ["connections 9"]),
            ])
    }
}
