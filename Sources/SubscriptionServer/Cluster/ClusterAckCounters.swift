/// The STATS counters of the cross-node `+OK <receivers>` (docs/CLUSTER.md, step 4), on a clustered node only
/// (``ServerStats/clusterAcks`` is nil on a single node, and STATS shows no `cluster_` key there).
public struct ClusterAckCounters: Sendable, Equatable {
    /// `cluster_acks_waited`: publications (to retained numbers too) and `REMOVE`s whose `+OK` waited for other
    /// nodes' confirmations.
    public var waited: UInt64 = 0
    /// `cluster_ack_timeouts`: of those, answered at `ack_timeout` with an expected node's confirmation missing.
    public var timeouts: UInt64 = 0
    /// `cluster_late_acks`: confirmations that came after their publication (or `REMOVE`) was answered (not counted
    /// in it).
    public var late: UInt64 = 0

    /// Zeroed counters.
    public init() {}

    /// The STATS lines.
    var lines: [String] {
        ["cluster_acks_waited \(waited)", "cluster_ack_timeouts \(timeouts)", "cluster_late_acks \(late)"]
    }
}

/// What the bridge counts in ``ClusterAckCounters``.
package enum ClusterAckEvent: Sendable {
    /// A publication's `+OK` waits for other nodes.
    case waited
    /// A wait ended at the timeout.
    case timedOut
    /// A confirmation came after the answer.
    case late
}

extension Server {
    /// Counts `event` in STATS, `times` times. On the server's queue.
    package func countClusterAck(_ event: ClusterAckEvent, times: Int = 1) {
        let times = UInt64(times)
        switch event {
        case .waited: stats.clusterAcks?.waited += times
        case .timedOut: stats.clusterAcks?.timeouts += times
        case .late: stats.clusterAcks?.late += times
        }
    }
}
