import Foundation
import XCTest

/// The cluster as one (docs/CLUSTER.md): `subctl stats --cluster` on any node lists every node with its state and
/// sums their counters, from the `$SYS.cluster.node` events each node posts every `sys_interval` seconds.
final class ClusterStatsTests: ClusterTestCase {
    /// Each node refuses a different number of commands (STATS `denied`, which only these commands change): the
    /// totals on node3 are their sum, every node is listed `up`; node2 stopped turns `lost` and leaves the sum.
    /// `sys_interval: 1`: `up` is a report at most two intervals old, room enough for a report's trip through NATS on a
    /// loaded machine; `lost` comes after six (6 s).
    func testStatsClusterSumsEveryNodeAndListsEach() throws {
        let nodes = try startCluster { _ in ["  ack: local", "sys_interval: 1"] }
        for (node, refused) in zip(nodes, [1, 2, 4]) {
            let client = try connect(node, "client of \(node.server)")
            for _ in 0..<refused { XCTAssertEqual(try client.command("SEND $SYS.stats hi").errorCode, "DENIED") }
        }
        var last: SubctlResult?
        try eventually("subctl stats --cluster on node3 sums the three nodes", timeout: 30) {
            let result = try subctl(nodes[2], "stats", ["--cluster", "--wait", "5"])
            last = result
            return result.status == 0
                && result.lines.filter { $0.hasPrefix("node ") }.map {
                    $0.split(separator: " ").prefix(3).joined(separator: " ")
                }
                    == ["node node1 up", "node node2 up", "node node3 up"]
                && result.lines.contains("denied 7")
        }
        XCTAssertFalse(last?.lines.contains { $0.hasPrefix("version ") || $0.hasPrefix("uptime_seconds ") } ?? true)
        XCTAssertTrue(
            last?.lines.contains { $0.hasPrefix("cluster_received ") } ?? false, "\(String(describing: last))")

        XCTAssertEqual(nodes[1].stop(), 0)
        try eventually("node2 is listed lost on node1 and left out of the sum", timeout: 30) {
            let result = try subctl(nodes[0], "stats", ["--cluster", "--wait", "5"])
            last = result
            return result.lines.contains { $0.hasPrefix("node node2 lost ") } && result.lines.contains("denied 5")
        }
    }

    /// A single node has no `$SYS.cluster.node`: `subctl stats --cluster` says so and fails.
    func testStatsClusterOnASingleNodeFails() throws {
        let daemon = try startDaemon(DaemonConfig(extraLines: ["sys_interval: 0.2"]))
        let result = try subctl(daemon, "stats", ["--cluster", "--wait", "1"])
        XCTAssertNotEqual(result.status, 0, "\(result)")
        XCTAssertTrue(result.stderr.contains("$SYS.cluster.node"), result.stderr)
    }
}
