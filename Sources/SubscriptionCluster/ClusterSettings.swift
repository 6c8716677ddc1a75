import SubscriptionNATS

/// The `cluster:` block of subd's configuration (config/subd.yaml, docs/CLUSTER.md): which NATS servers to join
/// through, as which node, and how publications are acknowledged.
public struct ClusterSettings: Sendable, Equatable {
    /// How `+OK <receivers>` counts a publication on a clustered node.
    public enum AckMode: String, Sendable, Equatable, CaseIterable {
        /// At once, with this node's receivers only (the other nodes' are not counted): no waiting, no
        /// confirmations.
        case local
        /// This node's receivers plus those the other nodes with matching interest confirm, waiting for them at most
        /// ``ClusterSettings/ackTimeout`` (docs/CLUSTER.md, step 4). The default.
        case all
    }

    /// The NATS servers to connect to (`nats://host:port`), tried in order; more are learnt from the cluster.
    public var servers: [NATSServerAddress]
    /// This node's name (`node`): letters, digits, `_` and `-`. Part of its origin id and of its NATS connection's
    /// name.
    public var node: String
    /// Credentials for servers whose URL carries none (`user`/`password`, or `token`).
    public var authentication: NATSAuthentication?
    /// `ack`.
    public var ack: AckMode
    /// `ack_timeout`: how long a publication's `+OK` waits for the other nodes' confirmations with `ack: all`.
    public var ackTimeout: Duration
    /// `ack_window`: with `ack: all`, the most publications of one session that wait for their confirmations at once;
    /// the session's next command waits (nothing more is read from it) until a quarter of them are answered.
    public var ackWindow: Int
    /// Replicas of the shared buckets when this node is the one that makes them; nil: min(3, servers listed).
    public var replicas: Int?

    /// Settings for `node` on `servers`.
    public init(
        servers: [NATSServerAddress], node: String, authentication: NATSAuthentication? = nil, ack: AckMode = .all,
        ackTimeout: Duration = Self.defaultAckTimeout, ackWindow: Int = Self.defaultAckWindow, replicas: Int? = nil
    ) {
        self.servers = servers
        self.node = node
        self.authentication = authentication
        self.ack = ack
        self.ackTimeout = ackTimeout
        self.ackWindow = ackWindow
        self.replicas = replicas
    }

    /// `ack_timeout` when it is not set: 20 ms, ample for nodes on one network (a confirmation takes a round trip
    /// through NATS, well under a millisecond on a LAN) and short enough that a stopped node costs little.
    public static let defaultAckTimeout: Duration = .milliseconds(20)

    /// `ack_window` when it is not set: 1,000, the window of subbench and of a typical pipelining client; a session
    /// keeps that many publications in flight at one NATS round trip each, and at most about 100 bytes per
    /// publication waiting (its slot, the bridge's entry and deadline).
    public static let defaultAckWindow = 1000

    /// The largest `ack_window`: as many as the bridge lets wait at once over all sessions.
    public static let maxAckWindow = 65_536

    /// The replicas a bucket made by this node gets.
    public var bucketReplicas: Int { replicas ?? min(3, max(1, servers.count)) }

    /// True for a valid node name: 1 to 64 ASCII letters, digits, `_` and `-`.
    public static func isValidNodeName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                    || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                    || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
                    || byte == UInt8(ascii: "-")
            }
    }
}
