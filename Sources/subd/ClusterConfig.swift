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
///   replicas: 3                 # optional; the shared bucket's replicas, min(3, servers listed) by default
/// ```
///
/// Read here from the document the loader composed with Yams (as ``UsersConfig``), so its fields are checked
/// together; each problem is one ``ConfigurationError`` keyed `cluster.<field>`. Read at start only: a reload keeps
/// the cluster settings the node started with.
enum ClusterConfig {
    /// The fields of the block.
    static let fields: Set<String> = ["servers", "node", "user", "password", "token", "ack", "ack_timeout", "replicas"]

    /// The settings under `cluster:` in `document`; nil when the key is absent or empty.
    static func settings(in document: Node.Mapping) throws(ConfigurationError) -> ClusterSettings? {
        guard let block = document["cluster"], block.null == nil else { return nil }
        guard let mapping = block.mapping else {
            throw ConfigurationError(key: "cluster", problem: "must be a mapping (servers:, node:, ...)")
        }
        for key in mapping.keys {
            let name = key.string ?? "\(key)"
            guard !fields.contains(name) else { continue }
            throw ConfigurationError(
                key: "cluster.\(name)", problem: "unknown field (known: \(fields.sorted().joined(separator: ", ")))")
        }
        func string(_ field: String) throws(ConfigurationError) -> String? {
            guard let node = mapping[field], node.null == nil else { return nil }
            guard let text = node.scalar?.string, !text.isEmpty else {
                throw ConfigurationError(key: "cluster.\(field)", problem: "must be a non-empty string")
            }
            return text
        }

        guard let list = mapping["servers"]?.sequence, !list.isEmpty else {
            throw ConfigurationError(
                key: "cluster.servers", problem: "must list the NATS servers to join through (nats://host:port)")
        }
        var servers: [NATSServerAddress] = []
        for entry in list {
            guard let text = entry.scalar?.string else {
                throw ConfigurationError(key: "cluster.servers", problem: "must be a list of strings (nats://host:port)")
            }
            do {
                servers.append(try NATSServerAddress(parsing: text))
            } catch {
                throw ConfigurationError(key: "cluster.servers", problem: "'\(text)' is not nats://host:port")
            }
        }

        guard let node = try string("node") else {
            throw ConfigurationError(key: "cluster.node", problem: "must name this node (letters, digits, _ and -)")
        }
        guard ClusterSettings.isValidNodeName(node) else {
            throw ConfigurationError(
                key: "cluster.node", problem: "'\(node)' is not 1 to 64 letters, digits, _ and -")
        }

        let user = try string("user")
        let password = try string("password")
        let token = try string("token")
        var authentication: NATSAuthentication?
        switch (user, password, token) {
        case (nil, nil, nil): authentication = nil
        case (let user?, let password?, nil): authentication = .user(user, password: password)
        case (nil, nil, let token?): authentication = .token(token)
        case (_, _, _?):
            throw ConfigurationError(key: "cluster.token", problem: "give either user and password, or token")
        default:
            throw ConfigurationError(key: "cluster.user", problem: "user and password go together")
        }

        var ack = ClusterSettings.AckMode.all
        if let text = try string("ack") {
            guard let mode = ClusterSettings.AckMode(rawValue: text) else {
                throw ConfigurationError(
                    key: "cluster.ack",
                    problem: "'\(text)' is not a mode: all (+OK counts every node's receivers) or local (this node's)")
            }
            ack = mode
        }
        var ackTimeout = ClusterSettings.defaultAckTimeout
        if let text = try string("ack_timeout") {
            guard let seconds = Double(text), seconds > 0, seconds <= 5 else {
                throw ConfigurationError(
                    key: "cluster.ack_timeout", problem: "must be seconds above 0 and at most 5 (fractions allowed)")
            }
            ackTimeout = .nanoseconds(Int64(seconds * 1_000_000_000))
        }

        var replicas: Int?
        if let text = try string("replicas") {
            guard let count = Int(text), (1...5).contains(count) else {
                throw ConfigurationError(key: "cluster.replicas", problem: "must be a whole number from 1 to 5")
            }
            replicas = count
        }
        return ClusterSettings(
            servers: servers, node: node, authentication: authentication, ack: ack, ackTimeout: ackTimeout,
            replicas: replicas)
    }
}
