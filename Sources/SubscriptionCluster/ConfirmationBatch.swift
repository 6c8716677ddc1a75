/// The confirmations this node owes one publisher's node in one turn, sent together at its end (docs/CLUSTER.md,
/// step 4): consecutive counters that reached the same receivers through the same copy (the usual case: a batch of
/// one publisher's publications, delivered one after the other) make one run and one line,
/// `<first>-<last> <origin> <receivers>[ <group>]`. A plain value.
struct ConfirmationBatch {
    /// Counters `first...last`, each delivered to `receivers` sessions through the plain copy (`group` nil) or the
    /// group's.
    struct Run: Equatable {
        var first: UInt64
        var last: UInt64
        var receivers: Int
        var group: String?
    }

    /// The runs, in the order they were made.
    private(set) var runs: [Run] = []

    /// A batch with this many runs is sent at once.
    static let maxRuns = 512

    /// True when it holds nothing.
    var isEmpty: Bool { runs.isEmpty }

    /// Adds a confirmation: the last run grows when it is the next counter with the same receivers and copy.
    mutating func add(_ counter: UInt64, receivers: Int, group: String?) {
        if let last = runs.last, last.last &+ 1 == counter, last.receivers == receivers, last.group == group,
            counter - last.first < BridgeHeaders.maxRun - 1
        {
            runs[runs.count - 1].last = counter
            return
        }
        runs.append(Run(first: counter, last: counter, receivers: receivers, group: group))
    }

    /// Adds the runs of `other` after these (its first joins the last one here when it follows it).
    mutating func add(_ other: ConfirmationBatch) {
        guard let first = other.runs.first else { return }
        if runs.isEmpty {
            runs = other.runs
            return
        }
        if let last = runs.last, last.last &+ 1 == first.first, last.receivers == first.receivers,
            last.group == first.group, first.last - last.first < BridgeHeaders.maxRun - 1
        {
            runs[runs.count - 1].last = first.last
            runs.append(contentsOf: other.runs.dropFirst())
        } else {
            runs.append(contentsOf: other.runs)
        }
    }

    /// The first ``maxRuns`` runs, taken out, once it holds that many (they are sent at once); nil before.
    mutating func takeFull() -> ConfirmationBatch? {
        guard runs.count >= Self.maxRuns else { return nil }
        var full = ConfirmationBatch()
        full.runs = Array(runs[..<Self.maxRuns])
        runs.removeFirst(Self.maxRuns)
        return full
    }

    /// The payload: one line per run, confirmed as `origin`.
    func encode(origin: String) -> [UInt8] {
        var payload: [UInt8] = []
        for run in runs {
            BridgeHeaders.appendConfirmation(
                counter: run.first, last: run.last, origin: origin, receivers: run.receivers, group: run.group,
                to: &payload)
        }
        return payload
    }
}
