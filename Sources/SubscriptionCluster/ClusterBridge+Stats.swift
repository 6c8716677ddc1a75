import SubscriptionNATS

/// The cluster as one (docs/CLUSTER.md): every `sys_interval` seconds each node publishes its STATS on `subd.stats`;
/// every node subscribes to it and keeps each node's latest report (``Server/clusterNodeReported(_:lines:)``), which it
/// posts on `$SYS.cluster.node`.
extension ClusterBridge {
    /// This node's name in the cluster.
    public var node: String { settings.node }

    /// Subscribes to the other nodes' STATS. At start, before the first connection.
    func startStatsSharing() {
        do throws(NATSError) {
            try client.subscribe(subject: StatsShare.subject) { [self] message in
                guard let (node, lines) = StatsShare.decode(message.payload), node != settings.node else { return }
                server.clusterNodeReported(node, lines: lines)
            }
        } catch {
            logger.warning(
                "cluster: cannot subscribe to the other nodes' STATS; $SYS.cluster.node lists this one: \(error)")
        }
    }

    /// Publishes this node's STATS `lines` on `subd.stats`; nothing while disconnected (a late report is no report).
    public func shareStats(_ lines: [String]) {
        guard client.isConnected else { return }
        do throws(NATSError) {
            try client.publish(
                subject: StatsShare.subject, payload: StatsShare.encode(node: settings.node, lines: lines))
        } catch {
            logger.debug("cluster: this node's STATS were not shared: \(error)")
        }
    }
}

/// The payload of a node's STATS on `subd.stats`: `node <name>`, then its STATS lines, LF between lines.
enum StatsShare {
    /// The subject every node publishes its STATS on and subscribes to.
    static let subject = "subd.stats"

    /// The payload for `node`'s STATS `lines`.
    static func encode(node: String, lines: [String]) -> [UInt8] {
        Array((["node \(node)"] + lines).joined(separator: "\n").utf8)
    }

    /// The node and its STATS lines; nil for a payload no node sent (no `node <name>` first line).
    static func decode(_ payload: some Collection<UInt8>) -> (node: String, lines: [String])? {
        let lines = String(decoding: payload, as: UTF8.self).split(separator: "\n").map(String.init)
        guard let first = lines.first, first.hasPrefix("node "), first.count > 5 else { return nil }
        return (String(first.dropFirst(5)), Array(lines.dropFirst()))
    }
}
