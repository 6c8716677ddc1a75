/// How many of a node's subscriptions hold each pattern, so that the node holds exactly one NATS subscription per
/// distinct pattern (docs/CLUSTER.md, "Interest propagation"): the first holder subscribes upstream, the last one
/// to go unsubscribes. A plain value; the bridge performs what it returns.
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
    private(set) var holders: [String: Int] = [:]

    /// One more subscription holds `pattern`.
    mutating func add(_ pattern: String) -> Action {
        let count = holders[pattern, default: 0] + 1
        holders[pattern] = count
        return count == 1 ? .subscribe : .none
    }

    /// One subscription to `pattern` ended. A pattern not held is ignored (``Action/none``).
    mutating func remove(_ pattern: String) -> Action {
        guard let count = holders[pattern] else { return .none }
        if count > 1 {
            holders[pattern] = count - 1
            return .none
        }
        holders[pattern] = nil
        return .unsubscribe
    }
}
