/// Whether this node's view of the cluster is complete (docs/CLUSTER.md, "Caught up"): both watches (the numbers
/// bucket's and the retained bucket's) have delivered their bucket's current values since the node last connected
/// to NATS. Until then a retained value or a number's absence here may not be the cluster's, and a cluster node
/// answers `GET` and `SUB` of a retained number `-ERR LIMIT` with ``reason``. A plain value, fed by the bridge.
struct CatchUp: Equatable {
    /// One of the two watches.
    enum Watch: Equatable {
        /// The numbers bucket's.
        case numbers
        /// The retained bucket's.
        case retained
    }

    /// True once the numbers watch has delivered the bucket's current values since the last connect.
    private(set) var numbers = false
    /// True once the retained watch has delivered the bucket's current values since the last connect.
    private(set) var retained = false

    /// True when both watches have caught up.
    var isComplete: Bool { numbers && retained }

    /// `watch` reported that it delivered its bucket's current values.
    mutating func caughtUp(_ watch: Watch) {
        switch watch {
        case .numbers: numbers = true
        case .retained: retained = true
        }
    }

    /// The connection to NATS is lost: what other nodes write meanwhile is missed until each watch reloads.
    mutating func disconnected() {
        numbers = false
        retained = false
    }

    /// Why a retained value cannot be answered yet (nil once complete), for `-ERR LIMIT`.
    var reason: String? {
        if isComplete { return nil }
        let missing = numbers ? "retained values" : "numbers"
        return "the cluster's \(missing) are not read yet (this node is connecting to NATS or loading its buckets); "
            + "try again"
    }
}
