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

    /// The nodes a publication expects to confirm their plain copy, in a fixed order (a node's place is its bit in
    /// ``Entry/confirmedMask``). One object for every publication to one number while the interest stays as it is
    /// (``InterestDirectory/expectations(for:now:)`` keeps it), so a run of confirmations from one node looks its
    /// place up once, not once per publication.
    final class Expectation: Sendable {
        /// The nodes, sorted.
        let nodes: [String]

        init(_ nodes: some Sequence<String>) {
            self.nodes = Array(Set(nodes)).sorted()
        }

        /// Where `node` stands in ``nodes``; nil when it is not expected.
        func place(of node: String) -> Int? {
            // Few nodes (a cluster's): a look along the list is cheaper than a hash of the name.
            nodes.firstIndex(of: node)
        }
    }

    /// One publication waiting. A confirmation of an expected node's plain copy (the usual one) is recorded as a bit,
    /// by the node's place in ``expected``: no allocation, no hashing; the rare ones (groups, nodes not expected, past
    /// the 64th) in small arrays.
    private struct Entry {
        /// The nodes expected to confirm their plain copy (shared: not copied).
        let expected: Expectation
        /// The queue groups expected to confirm their copy (on whichever node NATS gave it to).
        var expectedGroups: Set<ExactName>
        /// Expected nodes and groups that have not confirmed yet.
        var missing: Int
        /// Bit i: the node at place i of ``expected`` confirmed its plain copy (the first 64; more in ``others``).
        var confirmedMask: UInt64 = 0
        /// The other nodes whose plain copy confirmed (not expected, or past the mask).
        var others: [String] = []
        /// The (node, group) copies that confirmed.
        var groupsConfirmed: [(node: String, group: ExactName)] = []
        var receivers = 0
        var answer: Answer?

        init(expected: Expectation, expectedGroups: Set<ExactName>) {
            self.expected = expected
            self.expectedGroups = expectedGroups
            self.missing = expected.nodes.count + expectedGroups.count
        }

        /// True once every expected node and group confirmed.
        var isComplete: Bool { missing == 0 }

        /// Records `node`'s plain copy, the node at `place` of ``expected`` (nil: not expected): false when it was
        /// recorded already.
        mutating func recordPlain(_ node: String, at place: Int?) -> Bool {
            if let place {
                if place < 64 {
                    let bit: UInt64 = 1 << UInt64(place)
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

    /// A publication's ticket, and whether it still waits (false once answered or expired: it waits to be taken out
    /// by ``drop()``). Kept apart from its ``Entry`` (at the same place of ``entries``): reading a slot copies two
    /// words, reading an entry would retain and release its references.
    private struct Slot {
        let ticket: UInt64
        var isWaiting = true
    }

    /// The publications in ticket order (tickets are given out rising, and each expected once:
    /// ``expect(_:from:groups:)``), from ``head`` on, those answered among them until ``drop()`` takes them out:
    /// found by a binary search, no hashing.
    private var slots: [Slot] = []
    /// Their entries, at the same places; reached only in place (`inout`: an array's element is changed where it
    /// is, where a `Deque`'s is copied out and back).
    private var entries: [Entry] = []
    /// The place of the first publication kept: those before it were taken out (their places are reused when the
    /// arrays are compacted, ``drop()``).
    private var head = 0
    /// Of ``entries``, the ones still waiting.
    private(set) var count = 0

    /// Entries held, waiting or answered and not taken out yet (at most twice those waiting, plus 1,024).
    var heldCount: Int { slots.count - head }

    /// The most receivers one answer counts.
    static let maxReceivers = 1 << 40

    /// Where `ticket`'s entry is (waiting or not), nil when there is none.
    private func index(of ticket: UInt64) -> Int? {
        // The newest first: an answer is attached right after its publication.
        guard head < slots.count else { return nil }
        if let last = slots.last, last.ticket <= ticket { return last.ticket == ticket ? slots.count - 1 : nil }
        let index = firstIndex(atLeast: ticket)
        return index < slots.count && slots[index].ticket == ticket ? index : nil
    }

    /// The place of the first entry whose ticket is `ticket` or above (``entries``'s count when there is none): a
    /// binary search.
    private func firstIndex(atLeast ticket: UInt64) -> Int {
        var low = head
        var high = slots.count
        while low < high {
            let middle = (low + high) / 2
            if slots[middle].ticket < ticket { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// True while `ticket` waits.
    func isWaiting(_ ticket: UInt64) -> Bool { index(of: ticket).map { slots[$0].isWaiting } ?? false }

    /// Starts waiting for `ticket`'s confirmations from `nodes` (their plain copies) and `groups` (one copy each, on
    /// any node), not both empty. False when ``limit`` publications wait already: the caller answers at once.
    mutating func expect(_ ticket: UInt64, from nodes: Set<String>, groups: Set<ExactName> = []) -> Bool {
        expect(ticket, from: Expectation(nodes), groups: groups)
    }

    /// ``expect(_:from:groups:)`` with the nodes as one shared ``Expectation``. Tickets rise: one not above the last
    /// one expected is refused (false).
    mutating func expect(_ ticket: UInt64, from nodes: Expectation, groups: Set<ExactName> = []) -> Bool {
        precondition(
            !nodes.nodes.isEmpty || !groups.isEmpty, "a publication nobody is expected to confirm does not wait")
        guard count < Self.limit, head == slots.count || slots[slots.count - 1].ticket < ticket else { return false }
        slots.append(Slot(ticket: ticket))
        entries.append(Entry(expected: nodes, expectedGroups: groups))
        count += 1
        return true
    }

    /// Attaches the answer of `ticket` (right after ``expect(_:from:groups:)``, before any confirmation can arrive:
    /// they come in later turns of the queue). Returns the receivers to answer with at once when the wait is over
    /// already, nil while it goes on.
    mutating func attach(_ answer: @escaping Answer, to ticket: UInt64) -> Int? {
        guard let index = index(of: ticket), slots[index].isWaiting else { return 0 }
        let receivers = Self.attach(answer, to: &entries[index])
        if receivers != nil { finish(at: index) }
        return receivers
    }

    /// `node` confirmed `receivers` for `ticket`: for the copy of its plain subscription, or with `group` for the copy
    /// of that queue group (which meets the group, whichever node confirms it).
    mutating func confirm(_ ticket: UInt64, by node: String, group: String? = nil, receivers: Int) -> Confirmation {
        guard let index = index(of: ticket) else { return .late }
        var place: (Expectation, Int?)?
        defer { drop() }
        return confirm(at: index, by: node, group: group.map { ExactName($0) }, receivers: receivers, place: &place)
    }

    /// Counts one confirmation in the entry at `index`; `place` remembers where `node` stands in the last
    /// expectation looked at (a run's entries share one).
    private mutating func confirm(
        at index: Int, by node: String, group: ExactName?, receivers: Int, place: inout (Expectation, Int?)?
    ) -> Confirmation {
        guard slots[index].isWaiting else { return .late }
        let outcome = Self.count(node, group: group, receivers: receivers, in: &entries[index], place: &place)
        if case .complete = outcome { finish(at: index) }
        return outcome
    }

    /// Attaches `answer` to `entry`, or returns its receivers when its wait is over already.
    private static func attach(_ answer: @escaping Answer, to entry: inout Entry) -> Int? {
        if entry.isComplete { return entry.receivers }
        entry.answer = answer
        return nil
    }

    /// What an entry whose timeout passed answers with.
    private static func expire(_ entry: inout Entry) -> (answer: Answer?, receivers: Int) {
        (entry.answer, entry.receivers)
    }

    /// Counts one confirmation in `entry`: ``Confirmation/complete(_:receivers:)`` when it was the last one expected
    /// (the caller finishes the entry).
    private static func count(
        _ node: String, group: ExactName?, receivers: Int, in entry: inout Entry, place: inout (Expectation, Int?)?
    ) -> Confirmation {
        if let group {
            guard entry.recordGroup(group, by: node) else { return .duplicate }
        } else {
            if place == nil || place!.0 !== entry.expected { place = (entry.expected, entry.expected.place(of: node)) }
            guard entry.recordPlain(node, at: place!.1) else { return .duplicate }
        }
        // Saturated: a confirmation carries at most 2^32 (``BridgeHeaders/maxReceivers``), but any number of nodes
        // (names nobody checks) may confirm; the answer's sum with the local receivers cannot overflow either.
        entry.receivers = min(entry.receivers + receivers, Self.maxReceivers)
        guard let answer = entry.answer, entry.isComplete else { return .counted }
        return .complete(answer, receivers: entry.receivers)
    }

    /// `node` confirmed `receivers` for each of the tickets `first...last` (a run of one line), as
    /// ``confirm(_:by:group:receivers:)`` does for one; `completed` is called, in ticket order, for each whose wait it
    /// ended. Returns how many were late (not waiting). One binary search finds the run's first entry; the walk from
    /// there costs no more than the entries in the run, however long the run (a line may name up to 2^20 counters).
    mutating func confirm(
        run first: UInt64, through last: UInt64, by node: String, group: String?, receivers: Int,
        completed: (Answer, Int) -> Void
    ) -> Int {
        let length = Int(last - first) + 1
        var matched = 0
        let group = group.map { ExactName($0) }
        var place: (Expectation, Int?)?
        var index = firstIndex(atLeast: first)
        while index < slots.count, slots[index].ticket <= last {
            switch confirm(at: index, by: node, group: group, receivers: receivers, place: &place) {
            case .counted, .duplicate: matched += 1
            case .complete(let answer, let total):
                matched += 1
                completed(answer, total)
            case .late: break
            }
            index += 1
        }
        drop()
        return length - matched
    }

    /// The timeout of `ticket` passed: its answer and the receivers confirmed so far, nil when it was answered
    /// already.
    mutating func expire(_ ticket: UInt64) -> (answer: Answer?, receivers: Int)? {
        guard let index = index(of: ticket), slots[index].isWaiting else { return nil }
        let result = Self.expire(&entries[index])
        finish(at: index)
        drop()
        return result
    }

    /// The entry at `index` waits no more (it keeps its place until ``drop()``).
    private mutating func finish(at index: Int) {
        slots[index].isWaiting = false
        entries[index].answer = nil
        count -= 1
    }

    /// Takes out the entries that wait no more: those at the front at once; those behind a waiting one when they are
    /// more than half (amortized, each entry is moved once), so an entry that waits long (a bucket write) does not
    /// keep those answered after it.
    private mutating func drop() {
        while head < slots.count, !slots[head].isWaiting { head += 1 }
        if head == slots.count {
            slots.removeAll(keepingCapacity: true)
            entries.removeAll(keepingCapacity: true)
            head = 0
            return
        }
        guard slots.count - head > 2 * count + 1_024 || head > 1_024 && head > slots.count / 2 else { return }
        var kept = (slots: [Slot](), entries: [Entry]())
        kept.slots.reserveCapacity(count)
        kept.entries.reserveCapacity(count)
        for index in head..<slots.count where slots[index].isWaiting {
            kept.slots.append(slots[index])
            kept.entries.append(entries[index])
        }
        (slots, entries, head) = (kept.slots, kept.entries, 0)
    }
}
