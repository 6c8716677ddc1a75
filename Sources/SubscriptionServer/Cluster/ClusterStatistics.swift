/// The cluster bridge's counters (STATS `cluster_*`, only on a node with `cluster:`; docs/PROTOCOL.md).
public struct ClusterStatistics: Sendable, Equatable {
    /// Publications of this node that could not be handed to NATS (its buffer full while disconnected, over its
    /// `max_payload`): they reached this node's subscribers only.
    public var dropped: UInt64
    /// Publications of other nodes that reached this node, each counted once however many of its upstream
    /// subscriptions brought a copy.
    public var received: UInt64

    /// Counters with these values.
    public init(dropped: UInt64 = 0, received: UInt64 = 0) {
        self.dropped = dropped
        self.received = received
    }

    /// The STATS lines, `key value`.
    var lines: [String] { ["cluster_dropped \(dropped)", "cluster_received \(received)"] }
}
