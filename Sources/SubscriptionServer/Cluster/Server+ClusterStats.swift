/// The cluster as one (docs/CLUSTER.md): every `sys_interval` seconds each node shares its STATS with the others and
/// posts, on `$SYS.cluster.node`, one event per node it knows, so a subscriber of any node sees the whole cluster
/// (`subctl stats --cluster`). On the server's queue.
extension Server {
    /// This node's STATS `lines` at a `$SYS.stats` tick: shared through `cluster`, kept as this node's report, and
    /// every node's latest report posted on `$SYS.cluster.node`.
    func shareClusterStats(_ lines: [String], through cluster: any ClusterLink) {
        cluster.shareStats(lines)
        let now = ContinuousClock.now
        clusterNodes.record(cluster.node, lines: lines, at: now)
        guard center.mayHaveSubscribers(SystemTopic.clusterNode.rawValue) else { return }
        let rows = clusterNodes.rows(now: now, interval: configuration.sysInterval)
        for row in rows {
            let head: [(key: String, value: JSONObject.Value)] = [
                ("node", .string(row.node)), ("state", .string(row.state.rawValue)),
                ("age_seconds", .integer(row.ageSeconds)), ("nodes", .unsigned(UInt64(rows.count))),
            ]
            post(.clusterNode, JSONObject(head + Self.statsFields(row.lines)))
        }
    }

    /// Another node's STATS `lines`, shared through the cluster: kept until its next report.
    package func clusterNodeReported(_ node: String, lines: [String]) {
        clusterNodes.record(node, lines: lines, at: ContinuousClock.now)
    }
}
