import SubscriptionProtocol
import SubscriptionWire

/// What the server asks of the cluster bridge (docs/CLUSTER.md), when `cluster:` is configured: the seam between the
/// command handlers and the `SubscriptionCluster` target, which implements it. Without `cluster:` the server has no
/// link and every handler works on its own center alone, as on a single node.
///
/// Every method is called on the server's queue, and every completion must be called there too (the bridge's NATS
/// client runs on that queue). The server keeps the rules of the protocol; the link only says what the cluster
/// decided.
package protocol ClusterLink: AnyObject {
    /// Creates `number` (`retained` or plain) in the shared numbers bucket, and then on this node
    /// (``Server/applyClusterCreate(_:retained:)``, with the kind the bucket has): `true` when this call created it,
    /// `false` when it existed already; a ``ProtocolError`` (`LIMIT`) when the cluster state cannot be reached.
    func create(_ number: String, retained: Bool, completion: @escaping @Sendable (Result<Bool, ProtocolError>) -> Void)

    /// Removes `number` from the shared numbers bucket, and then from this node (``Server/applyClusterRemove(_:)``):
    /// how many sessions were told `GONE`, this node's (also when the bucket's watch removed it here first) and, with
    /// `ack: all`, those the other nodes confirmed (docs/CLUSTER.md, step 6); `NOTFOUND` when the bucket has no such
    /// number, `LIMIT` when the cluster state cannot be reached.
    func remove(_ number: String, completion: @escaping @Sendable (Result<Int, ProtocolError>) -> Void)

    /// Looks `number` up in the shared numbers bucket, through its leader, for a `SUB`, `PUB` or `SEND` of a number
    /// this node does not know (yet: its watch brings a number created elsewhere milliseconds later): when the bucket
    /// has it, it is created on this node (``Server/applyClusterCreate(_:)``) and the answer is `true`.
    func lookUp(_ number: String, completion: @escaping @Sendable (Result<Bool, ProtocolError>) -> Void)

    /// A local session published to `number` (already delivered locally, where it met the queue groups `groups`,
    /// which are served): the bridge sends it to the other nodes. Returns a ticket when the reply is to wait for the
    /// other nodes' receivers (`ack: all` and some node expected to have interest; docs/CLUSTER.md, step 4): the
    /// caller then asks ``confirmations(of:answer:)`` in the same turn. Nil: the reply is the local count, now.
    func published(
        to number: String, sender: String?, info: [InfoPair], groups: [String], payload: ArraySlice<UInt8>
    ) -> UInt64?

    /// Calls `answer` once, on the server's queue, with the receivers the other nodes confirmed for the publication
    /// `ticket`: when every expected node has confirmed, or after the ack timeout with those that did; within this
    /// call when the wait is over already. The bridge ends the server's turn after answering later (once for
    /// everything answered in one turn of the queue).
    func confirmations(of ticket: UInt64, answer: @escaping @Sendable (Int) -> Void)

    /// `ack_window`: the most publications of one session whose replies wait for confirmations at once (the next
    /// waits, unread, until a quarter of them are answered: ``Server/runsAhead(_:of:)``).
    var ackWindow: Int { get }

    /// The node's sessions now hold `pattern` once more (a new subscription outside queue groups).
    func interestAdded(_ pattern: String)

    /// The node's sessions hold `pattern` once less (`UNSUB`, a session that ended, a removed number's exact
    /// subscription, a subscription that moved into a group).
    func interestRemoved(_ pattern: String)

    /// True when `number` is a retained number the cluster shares (its publications go through
    /// ``publishRetained(to:sender:info:payload:completion:)``); false for a plain number, and for a retained number
    /// this node restored from its `state_dir` alone.
    func sharesRetained(_ number: String) -> Bool

    /// A local session publishes to the shared retained `number`: the bridge writes the value to the retained bucket
    /// (with the number's next revision) and, once stored, delivers it on this node like every node does
    /// (``Server/applyClusterRetained(_:revision:sender:info:payload:)``); completes with this node's receivers and,
    /// with `ack: all`, those the other nodes confirmed (docs/CLUSTER.md, step 5), or `LIMIT` when the bucket cannot
    /// be reached (nothing was published).
    func publishRetained(
        to number: String, sender: String?, info: [InfoPair], payload: [UInt8],
        completion: @escaping @Sendable (Result<Int, ProtocolError>) -> Void)

    /// The node's sessions now hold `pattern` in queue group `group` once more (a new member, or a subscription that
    /// moved into the group).
    func groupInterestAdded(_ pattern: String, group: String)

    /// The node's sessions hold `pattern` in `group` once less.
    func groupInterestRemoved(_ pattern: String, group: String)

    /// Nil once this node's watches have delivered the numbers and retained buckets' current values since it last
    /// connected to NATS; until then (and while disconnected) the `LIMIT` that a `GET` or `SUB` of a retained number
    /// answers: this node's value may not be the latest (docs/CLUSTER.md, "Caught up").
    var notCaughtUp: ProtocolError? { get }

    /// The bridge's counters, for STATS and the metrics endpoint.
    var statistics: ClusterStatistics { get }

    /// This node's name in the cluster (`cluster.node`).
    var node: String { get }

    /// Sends this node's STATS `lines` to the other nodes (every `sys_interval` seconds), which hand them to
    /// ``Server/clusterNodeReported(_:lines:)``. Dropped while NATS cannot be reached.
    func shareStats(_ lines: [String])
}
