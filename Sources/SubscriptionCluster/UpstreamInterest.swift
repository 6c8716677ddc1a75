import SubscriptionWire

/// How many of a node's subscriptions hold each pattern, so that the node holds exactly one NATS subscription per
/// distinct pattern (docs/CLUSTER.md, "Interest propagation"): the first holder subscribes upstream, the last one
/// to go unsubscribes. Patterns are counted by their bytes (``ExactName``), as NATS compares subjects: two canonically
/// equivalent spellings are two patterns upstream. A plain value; the bridge performs what it returns.
struct UpstreamInterest {
    /// What to do upstream after a change.
    enum Action: Equatable {
        /// Nothing: the pattern was held already, or is still held.
        case none
        /// The pattern's first holder: subscribe upstream.
        case subscribe
        /// The pattern's last holder went: unsubscribe upstream.
        case unsubscribe
    }

    /// Holders per pattern; a pattern nobody holds is not in it.
    private(set) var holders: [ExactName: Int] = [:]

    /// One more subscription holds `pattern`.
    mutating func add(_ pattern: String) -> Action {
        let key = ExactName(pattern)
        let count = holders[key, default: 0] + 1
        holders[key] = count
        return count == 1 ? .subscribe : .none
    }

    /// One subscription to `pattern` ended. A pattern not held is ignored (``Action/none``).
    mutating func remove(_ pattern: String) -> Action {
        let key = ExactName(pattern)
        guard let count = holders[key] else { return .none }
        if count > 1 {
            holders[key] = count - 1
            return .none
        }
        holders[key] = nil
        return .unsubscribe
    }
}
