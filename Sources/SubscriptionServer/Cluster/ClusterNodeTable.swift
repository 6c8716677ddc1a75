/// The latest STATS of every node of the cluster (docs/CLUSTER.md, "The cluster as one"): each node shares its STATS
/// lines every `sys_interval` seconds; this node keeps the last report of each, with when it came, and posts them as
/// `$SYS.cluster.node` events. A node that stops reporting turns `stale`, then `lost`; it stays listed (its name is
/// unique in the cluster, so a restart replaces its entry).
struct ClusterNodeTable {
    /// What a node is, from the age of its last report.
    enum State: String {
        /// Reported within two intervals.
        case up
        /// Last reported between two and six intervals ago.
        case stale
        /// Silent for more than six intervals.
        case lost
    }

    /// One node as listed: its name, state, the age of its report in whole seconds, and its STATS lines.
    struct Row: Equatable {
        let node: String
        let state: State
        let ageSeconds: Int64
        let lines: [String]
    }

    private var reports: [String: (lines: [String], at: ContinuousClock.Instant)] = [:]

    /// An empty table.
    init() {}

    /// `node` reported `lines` (STATS `key value` lines) at `time`, replacing its previous report.
    mutating func record(_ node: String, lines: [String], at time: ContinuousClock.Instant) {
        reports[node] = (lines, time)
    }

    /// Every node known, by name, with its state at `now` for reports expected every `interval` seconds.
    func rows(now: ContinuousClock.Instant, interval: Double) -> [Row] {
        reports.sorted { $0.key < $1.key }.map { node, report in
            let age = report.at.duration(to: now)
            let seconds = Double(age.components.seconds) + Double(age.components.attoseconds) / 1e18
            let state: State = seconds <= 2 * interval ? .up : seconds <= 6 * interval ? .stale : .lost
            return Row(node: node, state: state, ageSeconds: max(0, age.components.seconds), lines: report.lines)
        }
    }
}
