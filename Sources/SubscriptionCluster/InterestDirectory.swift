import SubscriptionWire

/// Which other nodes hold which patterns upstream (docs/CLUSTER.md, step 4): what the bucket `subd_interest` says,
/// one entry per node (its origin id), each a node's distinct upstream patterns, plain and in queue groups. A
/// publishing node waits for the confirmations of the nodes whose plain patterns match the number, and of one node of
/// each group some node holds a matching pattern in (NATS picks which), and of no other.
///
/// A node puts its entry again every ``ClusterAcks/heartbeat``; an entry not seen for ``silence`` is a node gone
/// (stopped, or cut off from NATS) and is expected no longer. A plain value: times are given, in nanoseconds of a
/// monotonic clock.
struct InterestDirectory {
    /// One node's patterns: exact names in a set (one lookup per publication), wildcard patterns in a list, and the
    /// patterns it holds in each queue group.
    struct Node: Equatable {
        var exact: Set<String>
        var wildcards: [String]
        var groups: [ExactName: [String]] = [:]
        /// When its entry was last seen.
        var seen: UInt64
    }

    /// How long an entry stays valid without being put again: three heartbeats.
    static let silence: UInt64 = 30_000_000_000

    /// The other nodes, by origin id.
    private(set) var nodes: [String: Node] = [:] {
        didSet {
            cache.removeAll(keepingCapacity: true)
            last = nil
            cacheValidUntil = 0  // the next lookup works out when the changed nodes fall silent
        }
    }

    /// What ``expectations(for:now:)`` found per number, while the nodes stay as they are and none falls silent
    /// (until ``cacheValidUntil``): a publication then pays one lookup, not a match against every node's patterns and
    /// two new sets.
    private var cache: [String: (nodes: PendingAcks.Expectation, groups: Set<ExactName>)] = [:]
    /// The number looked up last and what it found (in ``cache`` too): a stream of publications to one number
    /// compares the name, where a lookup in ``cache`` hashes it.
    private var last: (number: String, found: (nodes: PendingAcks.Expectation, groups: Set<ExactName>))?
    /// When the first node heard from falls silent (the cache is cleared then).
    private var cacheValidUntil: UInt64 = 0
    /// The most numbers cached; past it the cache starts again.
    static let cacheLimit = 4096

    /// A node's entry was put (or loaded): its patterns (plain, and ``groupLine(pattern:group:)`` for those held in
    /// a group) are these from now on. Returns true when the node is new.
    @discardableResult
    mutating func update(origin: String, patterns: [String], now: UInt64) -> Bool {
        var node = Node(exact: [], wildcards: [], seen: now)
        // A name that breaks the rules (no node sends one) is skipped.
        for line in patterns {
            if let space = line.utf8.firstIndex(of: UInt8(ascii: " ")) {
                let pattern = String(line[..<space])
                let group = String(line[line.utf8.index(after: space)...])
                guard !group.isEmpty, (try? Names.checkPattern(pattern)) != nil else { continue }
                node.groups[ExactName(group), default: []].append(pattern)
                continue
            }
            let pattern = line
            guard let isWildcard = try? Names.checkPattern(pattern) else { continue }
            if isWildcard { node.wildcards.append(pattern) } else { node.exact.insert(pattern) }
        }
        return nodes.updateValue(node, forKey: origin) == nil
    }

    /// A node's entry was deleted. Returns true when it was known.
    @discardableResult
    mutating func remove(origin: String) -> Bool {
        nodes.removeValue(forKey: origin) != nil
    }

    /// True when `node` was heard from within ``silence`` of `now`; a reading of the clock older than its last
    /// entry (taken before it, a publication's shared one: ``ClusterAcks/publicationClock()``) counts as heard,
    /// never as a difference that wraps around.
    private static func isHeard(_ node: Node, at now: UInt64) -> Bool {
        now <= node.seen || now - node.seen <= silence
    }

    /// Forgets the nodes silent for longer than ``silence``; returns their origin ids.
    mutating func expire(now: UInt64) -> [String] {
        let gone = nodes.filter { !Self.isHeard($0.value, at: now) }.map(\.key)
        for origin in gone { nodes[origin] = nil }
        return gone
    }

    /// The nodes, heard from within ``silence``, that hold a pattern matching `number` outside groups: those a
    /// publication to it reaches through NATS on their plain subscriptions. `includingGroups`: also those that hold
    /// one in a queue group only (a bucket write, a `REMOVE` or a retained value, reaches every node, and each serves
    /// its own members: docs/CLUSTER.md, steps 5 and 6).
    func expected(for number: String, now: UInt64, includingGroups: Bool = false) -> Set<String> {
        var found: Set<String> = []
        for (origin, node) in nodes where Self.isHeard(node, at: now) {
            if node.exact.contains(number)
                || node.wildcards.contains(where: { Names.matches(pattern: $0, number: number) })
                || (includingGroups && Self.matches(node.groups, number))
            {
                found.insert(origin)
            }
        }
        return found
    }

    /// True when a pattern of one of `groups` matches `number`.
    private static func matches(_ groups: [ExactName: [String]], _ number: String) -> Bool {
        groups.values.contains { $0.contains { Names.matches(pattern: $0, number: number) } }
    }

    /// The queue groups, held by nodes heard from within ``silence``, with a pattern matching `number`: each gets a
    /// publication to it once, on one of those nodes (NATS picks which).
    func expectedGroups(for number: String, now: UInt64) -> Set<ExactName> {
        var found: Set<ExactName> = []
        for node in nodes.values where Self.isHeard(node, at: now) {
            for (group, patterns) in node.groups
            where patterns.contains(where: { Names.matches(pattern: $0, number: number) }) {
                found.insert(group)
            }
        }
        return found
    }

    /// ``expected(for:now:includingGroups:)`` (outside groups, as one ``PendingAcks/Expectation`` shared by every
    /// publication to the number) and ``expectedGroups(for:now:)`` of `number`, remembered until the nodes change or
    /// one falls silent.
    mutating func expectations(
        for number: String, now: UInt64
    ) -> (nodes: PendingAcks.Expectation, groups: Set<ExactName>) {
        if now > cacheValidUntil || cache.count >= Self.cacheLimit {
            cache.removeAll(keepingCapacity: true)
            last = nil
            cacheValidUntil = nodes.values.lazy.map { $0.seen &+ Self.silence }.filter { $0 >= now }.min() ?? .max
        }
        if let last, last.number == number { return last.found }
        if let found = cache[number] {
            last = (number, found)
            return found
        }
        let found = (PendingAcks.Expectation(expected(for: number, now: now)), expectedGroups(for: number, now: now))
        cache[number] = found
        last = (number, found)
        return found
    }

    /// The line of an entry that says its node holds `pattern` in queue group `group` (a group name holds no space).
    static func groupLine(pattern: String, group: String) -> String { pattern + " " + group }

    /// An entry's value: the patterns, one per line (a pattern holds no control byte), sorted.
    static func encode(_ patterns: some Sequence<String>) -> [UInt8] {
        Array(patterns.sorted().joined(separator: "\n").utf8)
    }

    /// The patterns of an entry's value.
    static func decode(_ value: [UInt8]) -> [String] {
        value.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
    }
}
