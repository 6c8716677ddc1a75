import SubscriptionCluster
import SubscriptionNATS
import SubscriptionServer
import Yams

/// The config file's `cluster:` key, a mapping (docs/CLUSTER.md); without it subd is a single node and runs no NATS
/// code:
///
/// ```yaml
/// cluster:
///   servers: ["nats://10.0.0.1:4222", "nats://10.0.0.2:4222", "nats://10.0.0.3:4222"]
///   node: node1                 # this node's name: letters, digits, _ and -
///   user: subd                  # optional: user and password, or token, for servers whose URL has none
///   password: "..."
///   ack: all                    # optional: all (the default: +OK counts every node's receivers) or local
///   ack_timeout: 0.02           # optional: seconds +OK waits for the other nodes' counts (ack: all)
///   ack_window: 1000            # optional: most publications of one session waiting for their counts (ack: all)
///   replicas: 3                 # optional; the shared buckets' replicas, min(3, servers listed) by default
/// ```
///
/// Read here from the document the loader composed with Yams (as ``UsersConfig``), so its fields are checked
/// together; each problem is one ``ConfigurationError`` keyed `cluster.<field>`. Read at start only: a reload keeps
/// the cluster settings the node started with.
enum ClusterConfig {
    /// The block's fields as read so far; a field left out keeps the value it starts with, its default.
    struct Draft {
        var servers: [NATSServerAddress] = []
        var node = ""
        var user: String?
        var password: String?
        var token: String?
        var ack = ClusterSettings.AckMode.all
        var ackTimeout = ClusterSettings.defaultAckTimeout
        var ackWindow = ClusterSettings.defaultAckWindow
        var replicas: Int?
    }

    private static let defaults = Draft()

    /// The fields of the block, in the order config/subd.yaml documents them, each with its default and how it is
    /// read.
    static let fields: [ConfigField<Draft>] = [
        ConfigField(
            "servers", "a list of nats://HOST:PORT",
            missing: "must list the NATS servers to join through (nats://host:port)"
        ) {
            node, draft, fail throws(ConfigurationError) in
            guard let list = node.sequence, !list.isEmpty else {
                throw fail("must list the NATS servers to join through (nats://host:port)")
            }
            for entry in list {
                guard let text = entry.scalar?.string else {
                    throw fail("must be a list of strings (nats://host:port)")
                }
                do {
                    draft.servers.append(try NATSServerAddress(parsing: text))
                } catch {
                    throw fail("'\(text)' is not nats://host:port")
                }
            }
        },
        ConfigField(
            "node", "1 to 64 letters, digits, _ and -", missing: "must name this node (letters, digits, _ and -)"
        ) {
            node, draft, fail throws(ConfigurationError) in
            let name = try string(node, fail)
            guard ClusterSettings.isValidNodeName(name) else {
                throw fail("'\(name)' is not 1 to 64 letters, digits, _ and -")
            }
            draft.node = name
        },
        ConfigField("user", "a string (with password)", .unset("none")) {
            node, draft, fail throws(ConfigurationError) in
            draft.user = try string(node, fail)
        },
        ConfigField("password", "a string (with user)", .unset("none")) {
            node, draft, fail throws(ConfigurationError) in
            draft.password = try string(node, fail)
        },
        ConfigField("token", "a string (instead of user and password)", .unset("none")) {
            node, draft, fail throws(ConfigurationError) in
            draft.token = try string(node, fail)
        },
        ConfigField("ack", "all or local", .value(defaults.ack.rawValue)) {
            node, draft, fail throws(ConfigurationError) in
            let text = try string(node, fail)
            guard let mode = ClusterSettings.AckMode(rawValue: text) else {
                throw fail("'\(text)' is not a mode: all (+OK counts every node's receivers) or local (this node's)")
            }
            draft.ack = mode
        },
        ConfigField(
            "ack_timeout", "seconds above 0, at most 5 (fractions allowed)",
            .value(ConfigKeyInfo.seconds(seconds(defaults.ackTimeout)))
        ) { node, draft, fail throws(ConfigurationError) in
            let text = try string(node, fail)
            guard let seconds = Double(text), seconds > 0, seconds <= 5 else {
                throw fail("must be seconds above 0 and at most 5 (fractions allowed)")
            }
            draft.ackTimeout = .nanoseconds(Int64(seconds * 1_000_000_000))
        },
        ConfigField(
            "ack_window", "a whole number from 1 to \(ClusterSettings.maxAckWindow)", .value("\(defaults.ackWindow)")
        ) { node, draft, fail throws(ConfigurationError) in
            let text = try string(node, fail)
            guard let count = Int(text), (1...ClusterSettings.maxAckWindow).contains(count) else {
                throw fail("must be a whole number from 1 to \(ClusterSettings.maxAckWindow)")
            }
            draft.ackWindow = count
        },
        ConfigField("replicas", "a whole number from 1 to 5", .unset("min(3, servers listed)")) {
            node, draft, fail throws(ConfigurationError) in
            let text = try string(node, fail)
            guard let count = Int(text), (1...5).contains(count) else {
                throw fail("must be a whole number from 1 to 5")
            }
            draft.replicas = count
        },
    ]

    /// A non-empty scalar.
    private static func string(_ node: Node, _ fail: (String) -> ConfigurationError) throws(ConfigurationError)
        -> String
    {
        guard let text = node.scalar?.string, !text.isEmpty else { throw fail("must be a non-empty string") }
        return text
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The settings under `cluster:` in `document`; nil when the key is absent or empty.
    static func settings(in document: Node.Mapping) throws(ConfigurationError) -> ClusterSettings? {
        guard let block = document["cluster"], block.null == nil else { return nil }
        guard let mapping = block.mapping else {
            throw ConfigurationError(key: "cluster", problem: "must be a mapping (servers:, node:, ...)")
        }
        let names = fields.map(\.info.name)
        for key in mapping.keys {
            let name = key.string ?? "\(key)"
            guard !names.contains(name) else { continue }
            throw ConfigurationError(
                key: "cluster.\(name)", problem: "unknown field (known: \(names.sorted().joined(separator: ", ")))")
        }
        var draft = Draft()
        try ConfigField.read(fields, from: mapping, into: &draft) { field, problem in
            ConfigurationError(key: "cluster.\(field)", problem: problem)
        }
        var authentication: NATSAuthentication?
        switch (draft.user, draft.password, draft.token) {
        case (nil, nil, nil): authentication = nil
        case (let user?, let password?, nil): authentication = .user(user, password: password)
        case (nil, nil, let token?): authentication = .token(token)
        case (_, _, _?):
            throw ConfigurationError(key: "cluster.token", problem: "give either user and password, or token")
        default:
            throw ConfigurationError(key: "cluster.user", problem: "user and password go together")
        }
        return ClusterSettings(
            servers: draft.servers, node: draft.node, authentication: authentication, ack: draft.ack,
            ackTimeout: draft.ackTimeout, ackWindow: draft.ackWindow, replicas: draft.replicas)
    }
}
