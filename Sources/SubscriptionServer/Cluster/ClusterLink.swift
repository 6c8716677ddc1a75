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
    /// Creates `number` in the shared numbers bucket, and then on this node (``Server/applyClusterCreate(_:)``):
    /// `true` when this call created it, `false` when it existed already; a ``ProtocolError`` (`LIMIT`) when the
    /// cluster state cannot be reached.
    func create(_ number: String, completion: @escaping @Sendable (Result<Bool, ProtocolError>) -> Void)

    /// Removes `number` from the shared numbers bucket, and then from this node (``Server/applyClusterRemove(_:)``):
    /// how many of this node's sessions were told `GONE` (also when the bucket's watch removed it here first);
    /// `NOTFOUND` when the bucket has no such number, `LIMIT` when the cluster state cannot be reached.
    func remove(_ number: String, completion: @escaping @Sendable (Result<Int, ProtocolError>) -> Void)

    /// Looks `number` up in the shared numbers bucket, through its leader, for a `SUB`, `PUB` or `SEND` of a number
    /// this node does not know (yet: its watch brings a number created elsewhere milliseconds later): when the bucket
    /// has it, it is created on this node (``Server/applyClusterCreate(_:)``) and the answer is `true`.
    func lookUp(_ number: String, completion: @escaping @Sendable (Result<Bool, ProtocolError>) -> Void)

    /// A local session published to `number` (already delivered locally, where it met the queue groups `groups`,
    /// which are served): the bridge sends it to the other nodes.
    func published(to number: String, sender: String?, info: [InfoPair], groups: [String], payload: ArraySlice<UInt8>)

    /// The node's sessions now hold `pattern` once more (a new subscription outside queue groups).
    func interestAdded(_ pattern: String)

    /// The node's sessions hold `pattern` once less (`UNSUB`, a session that ended, a removed number's exact
    /// subscription, a subscription that moved into a group).
    func interestRemoved(_ pattern: String)

    /// The node's sessions now hold `pattern` in queue group `group` once more (a new member, or a subscription that
    /// moved into the group).
    func groupInterestAdded(_ pattern: String, group: String)

    /// The node's sessions hold `pattern` in `group` once less.
    func groupInterestRemoved(_ pattern: String, group: String)

    /// The bridge's counters, for STATS and the metrics endpoint.
    var statistics: ClusterStatistics { get }
}
