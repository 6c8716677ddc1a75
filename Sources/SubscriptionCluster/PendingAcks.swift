/// The publications of this node whose `+OK <receivers>` waits for other nodes (docs/CLUSTER.md, step 4): per
/// publication (its `Subd-Id` counter, the ticket), the nodes expected to confirm, the receivers confirmed so far, and
/// the answer to give once every expected node confirmed or the timeout passed.
///
/// A node confirms each copy it used once: the copy of its plain subscription (the node's own confirmation, the one
/// an expected node is waited for) and the copy of each queue group it served (`part`, the group: those serve other
/// sessions, docs/CLUSTER.md step 3). A second confirmation of one node and part is ignored, so the sum never counts a
/// receiver twice. A confirmation from a node that was not expected (its
/// interest had not reached this node yet) is counted when it comes before the answer. A confirmation after the answer
/// is late: it is not counted, the caller counts it in STATS. A plain value; the bridge runs the timer and the answer.
struct PendingAcks {
    /// The answer of a publication: called once with the receivers the other nodes confirmed.
    typealias Answer = @Sendable (Int) -> Void

    /// One publication waiting.
    private struct Entry {
        var expected: Set<String>
        /// The nodes whose plain copy confirmed.
        var confirmed: Set<String> = []
        /// The (node, group) copies that confirmed.
        var groupsConfirmed: Set<String> = []
        var receivers = 0
        var answer: Answer?
    }

    /// What a confirmation did.
    enum Confirmation {
        /// Counted; other expected nodes have not confirmed yet (or the answer is not attached yet).
        case counted
        /// The last expected node confirmed: give `answer` the receivers.
        case complete(Answer, receivers: Int)
        /// A node's second confirmation of one publication and part: ignored.
        case duplicate
        /// The publication was answered already (or never waited): not counted.
        case late
    }

    /// At most this many publications wait at once; beyond it a publication is answered at once with the local count
    /// (each session holds at most one, so this is only reached past that many sessions publishing at once).
    static let limit = 65_536

    private var entries: [UInt64: Entry] = [:]

    /// Publications waiting.
    var count: Int { entries.count }

    /// Starts waiting for `ticket`'s confirmations from `nodes` (not empty). False when ``limit`` publications wait
    /// already: the caller answers at once.
    mutating func expect(_ ticket: UInt64, from nodes: Set<String>) -> Bool {
        precondition(!nodes.isEmpty, "a publication no other node is expected to confirm does not wait")
        guard entries.count < Self.limit else { return false }
        entries[ticket] = Entry(expected: nodes)
        return true
    }

    /// Attaches the answer of `ticket` (right after ``expect(_:from:)``, before any confirmation can arrive: they come
    /// in later turns of the queue). Returns the receivers to answer with at once when the wait is over already, nil
    /// while it goes on.
    mutating func attach(_ answer: @escaping Answer, to ticket: UInt64) -> Int? {
        guard var entry = entries[ticket] else { return 0 }
        if entry.expected.isSubset(of: entry.confirmed) {
            entries[ticket] = nil
            return entry.receivers
        }
        entry.answer = answer
        entries[ticket] = entry
        return nil
    }

    /// `node` confirmed `receivers` for `ticket`: for the copy of its plain subscription, or with `group` for the copy
    /// of that queue group (counted, but no node is waited for because of one).
    mutating func confirm(_ ticket: UInt64, by node: String, group: String? = nil, receivers: Int) -> Confirmation {
        guard var entry = entries[ticket] else { return .late }
        if let group {
            guard entry.groupsConfirmed.insert(node + " " + group).inserted else { return .duplicate }
        } else {
            guard entry.confirmed.insert(node).inserted else { return .duplicate }
        }
        entry.receivers += receivers
        if let answer = entry.answer, entry.expected.isSubset(of: entry.confirmed) {
            entries[ticket] = nil
            return .complete(answer, receivers: entry.receivers)
        }
        entries[ticket] = entry
        return .counted
    }

    /// The timeout of `ticket` passed: its answer and the receivers confirmed so far, nil when it was answered
    /// already.
    mutating func expire(_ ticket: UInt64) -> (answer: Answer?, receivers: Int)? {
        guard let entry = entries.removeValue(forKey: ticket) else { return nil }
        return (entry.answer, entry.receivers)
    }
}
