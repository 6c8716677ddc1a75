import SubscriptionWire

/// The publications of this node whose `+OK <receivers>` waits for other nodes (docs/CLUSTER.md, step 4): per
/// publication (its `Subd-Id` counter, the ticket), the nodes expected to confirm their plain copy, the queue groups
/// expected to confirm their copy, the receivers confirmed so far, and the answer to give once every expected node
/// and group confirmed or the timeout passed.
///
/// A node confirms each copy it used once: the copy of its plain subscription (the node's own confirmation, the one
/// an expected node is waited for) and the copy of each queue group it served (`part`, the group: those serve other
/// sessions, docs/CLUSTER.md step 3). NATS gives a group's copy to one node of the group, not known in advance, so an
/// expected group is met by its first confirmation from any node. A second confirmation of one node and part is
/// ignored, so the sum never counts a receiver twice. A confirmation from a node that was not expected (its
/// interest had not reached this node yet) is counted when it comes before the answer. A confirmation after the answer
/// is late: it is not counted, the caller counts it in STATS. A plain value; the bridge runs the timer and the answer.
struct PendingAcks {
    /// The answer of a publication: called once with the receivers the other nodes confirmed.
    typealias Answer = @Sendable (Int) -> Void

    /// One publication waiting. A confirmation of an expected node's plain copy (the usual one) is recorded as a bit,
    /// by the node's place in ``expected``: no allocation, no hashing but the lookup; the rare ones (groups, nodes not
    /// expected) in small arrays.
    private struct Entry {
        /// The nodes expected to confirm their plain copy (shared with the bridge's cache of them: not copied).
        var expected: Set<String>
        /// The queue groups expected to confirm their copy (on whichever node NATS gave it to).
        var expectedGroups: Set<ExactName>
        /// Expected nodes and groups that have not confirmed yet.
        var missing: Int
        /// Bit i: the node at offset i of ``expected`` confirmed its plain copy (the first 64; more in ``others``).
        var confirmedMask: UInt64 = 0
        /// The other nodes whose plain copy confirmed (not expected, or past the mask).
        var others: [String] = []
        /// The (node, group) copies that confirmed.
        var groupsConfirmed: [(node: String, group: ExactName)] = []
        var receivers = 0
        var answer: Answer?

        init(expected: Set<String>, expectedGroups: Set<ExactName>) {
            self.expected = expected
            self.expectedGroups = expectedGroups
            self.missing = expected.count + expectedGroups.count
        }

        /// True once every expected node and group confirmed.
        var isComplete: Bool { missing == 0 }

        /// Records `node`'s plain copy: false when it was recorded already.
        mutating func recordPlain(_ node: String) -> Bool {
            if let index = expected.firstIndex(of: node) {
                let offset = expected.distance(from: expected.startIndex, to: index)
                if offset < 64 {
                    let bit: UInt64 = 1 << UInt64(offset)
                    guard confirmedMask & bit == 0 else { return false }
                    confirmedMask |= bit
                    missing -= 1
                    return true
                }
                guard !others.contains(node) else { return false }
                others.append(node)
                missing -= 1
                return true
            }
            guard !others.contains(node) else { return false }
            others.append(node)
            return true
        }

        /// Records `node`'s copy of `group`: false when it was recorded already. The first copy of an expected group
        /// meets it.
        mutating func recordGroup(_ group: ExactName, by node: String) -> Bool {
            guard !groupsConfirmed.contains(where: { $0.node == node && $0.group == group }) else { return false }
            let met = groupsConfirmed.contains { $0.group == group }
            groupsConfirmed.append((node, group))
            if !met && expectedGroups.contains(group) { missing -= 1 }
            return true
        }
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
    /// (each session has at most `ack_window` waiting, so this is reached only when many sessions pipeline at once).
    static let limit = 65_536

    private var entries: [UInt64: Entry] = [:]

    /// The most receivers one answer counts.
    static let maxReceivers = 1 << 40

    /// Publications waiting.
    var count: Int { entries.count }

    /// True while `ticket` waits.
    func isWaiting(_ ticket: UInt64) -> Bool { entries[ticket] != nil }

    /// Starts waiting for `ticket`'s confirmations from `nodes` (their plain copies) and `groups` (one copy each, on
    /// any node), not both empty. False when ``limit`` publications wait already: the caller answers at once.
    mutating func expect(_ ticket: UInt64, from nodes: Set<String>, groups: Set<ExactName> = []) -> Bool {
        precondition(!nodes.isEmpty || !groups.isEmpty, "a publication nobody is expected to confirm does not wait")
        guard entries.count < Self.limit else { return false }
        entries[ticket] = Entry(expected: nodes, expectedGroups: groups)
        return true
    }

    /// Attaches the answer of `ticket` (right after ``expect(_:from:)``, before any confirmation can arrive: they come
    /// in later turns of the queue). Returns the receivers to answer with at once when the wait is over already, nil
    /// while it goes on.
    mutating func attach(_ answer: @escaping Answer, to ticket: UInt64) -> Int? {
        guard var entry = entries[ticket] else { return 0 }
        if entry.isComplete {
            entries[ticket] = nil
            return entry.receivers
        }
        entry.answer = answer
        entries[ticket] = entry
        return nil
    }

    /// `node` confirmed `receivers` for `ticket`: for the copy of its plain subscription, or with `group` for the copy
    /// of that queue group (which meets the group, whichever node confirms it).
    mutating func confirm(_ ticket: UInt64, by node: String, group: String? = nil, receivers: Int) -> Confirmation {
        guard let index = entries.index(forKey: ticket) else { return .late }
        // Changed in place: a copy taken out and put back would copy its arrays on the first append.
        let outcome = Self.count(node, group: group, receivers: receivers, in: &entries.values[index])
        if case .complete = outcome { entries.remove(at: index) }
        return outcome
    }

    /// Counts one confirmation in `entry`: ``Confirmation/complete(_:receivers:)`` when it was the last one expected
    /// (the caller removes the entry).
    private static func count(
        _ node: String, group: String?, receivers: Int, in entry: inout Entry
    ) -> Confirmation {
        if let group {
            guard entry.recordGroup(ExactName(group), by: node) else { return .duplicate }
        } else {
            guard entry.recordPlain(node) else { return .duplicate }
        }
        // Saturated: a confirmation carries at most 2^32 (``BridgeHeaders/maxReceivers``), but any number of nodes
        // (names nobody checks) may confirm; the answer's sum with the local receivers cannot overflow either.
        entry.receivers = min(entry.receivers + receivers, Self.maxReceivers)
        guard let answer = entry.answer, entry.isComplete else { return .counted }
        return .complete(answer, receivers: entry.receivers)
    }

    /// `node` confirmed `receivers` for each of the tickets `first...last` (a run of one line), as
    /// ``confirm(_:by:group:receivers:)`` does for one; `completed` is called, in ticket order, for each whose wait it
    /// ended. Returns how many were late (not waiting). A run longer than the publications waiting (a line may name
    /// up to 2^20 counters) is matched against those instead of counter by counter, so no line costs more than the
    /// smaller of the two.
    mutating func confirm(
        run first: UInt64, through last: UInt64, by node: String, group: String?, receivers: Int,
        completed: (Answer, Int) -> Void
    ) -> Int {
        let length = Int(last - first) + 1
        var matched = 0
        func one(_ ticket: UInt64) {
            switch confirm(ticket, by: node, group: group, receivers: receivers) {
            case .counted, .duplicate: matched += 1
            case .complete(let answer, let total):
                matched += 1
                completed(answer, total)
            case .late: break
            }
        }
        if length <= entries.count {
            for ticket in first...last { one(ticket) }
        } else {
            for ticket in entries.keys.filter({ $0 >= first && $0 <= last }).sorted() { one(ticket) }
        }
        return length - matched
    }

    /// The timeout of `ticket` passed: its answer and the receivers confirmed so far, nil when it was answered
    /// already.
    mutating func expire(_ ticket: UInt64) -> (answer: Answer?, receivers: Int)? {
        guard let entry = entries.removeValue(forKey: ticket) else { return nil }
        return (entry.answer, entry.receivers)
    }
}
