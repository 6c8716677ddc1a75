import SubscriptionWire

/// The queue groups a node's sessions hold, as NATS queue subscriptions (docs/CLUSTER.md, "The message path", step
/// 3): one per distinct (pattern, group), counted over the node's subscriptions like ``UpstreamInterest``, and, per
/// group held, the last counter accepted per origin (a node whose members of one group hold overlapping patterns may
/// be picked by NATS for each pattern's queue: the group gets the publication once). A plain value; the bridge
/// performs what it returns.
struct GroupInterest {
    /// A pattern held in a group: one NATS queue subscription, `subd.m.<pattern>` in queue `<group>`. Compared by
    /// bytes (``ExactName``), as NATS compares subjects and queue names.
    struct Key: Hashable {
        private let exactPattern: ExactName
        /// The group's name, compared by bytes.
        let exactGroup: ExactName

        /// The key of `pattern` in `group`.
        init(pattern: String, group: String) {
            exactPattern = ExactName(pattern)
            exactGroup = ExactName(group)
        }

        /// The pattern.
        var pattern: String { exactPattern.string }
        /// The group's name (the NATS queue's name).
        var group: String { exactGroup.string }
    }

    /// How many subscriptions hold a key, and its upstream subscription once made.
    private struct Entry {
        var holders: Int
        var sid: UInt64?
    }

    /// Per group held: how many keys hold it, and its dedupe.
    private struct Group {
        var keys = 0
        var origins = OriginCounters()
    }

    /// The keys held; a key nobody holds is not in it.
    private var entries: [Key: Entry] = [:]
    /// The groups of the keys held.
    private var groups: [ExactName: Group] = [:]

    /// One more subscription holds `key`. True when the key has no upstream subscription (its first holder, or one
    /// whose subscribe failed): the bridge subscribes, then calls ``subscribed(_:sid:)``.
    mutating func add(_ key: Key) -> Bool {
        if var entry = entries[key] {
            entry.holders += 1
            entries[key] = entry
            return entry.sid == nil
        }
        entries[key] = Entry(holders: 1, sid: nil)
        groups[key.exactGroup, default: Group()].keys += 1
        return true
    }

    /// The upstream subscription of `key` was made (ignored for a key no longer held).
    mutating func subscribed(_ key: Key, sid: UInt64) {
        entries[key]?.sid = sid
    }

    /// One subscription to `key` ended. When it was the last holder the key goes (with its group's dedupe, when no key
    /// of the group is left) and its upstream subscription, if it was made, is returned to be ended.
    mutating func remove(_ key: Key) -> UInt64? {
        guard var entry = entries[key] else { return nil }
        if entry.holders > 1 {
            entry.holders -= 1
            entries[key] = entry
            return nil
        }
        entries[key] = nil
        if let group = groups[key.exactGroup], group.keys > 1 {
            groups[key.exactGroup]?.keys = group.keys - 1
        } else {
            groups[key.exactGroup] = nil
        }
        return entry.sid
    }

    /// True when a subscription holds `key`.
    func holds(_ key: Key) -> Bool { entries[key] != nil }

    /// The keys held without an upstream subscription (a subscribe that failed): subscribed again at each connect.
    var unsubscribed: [Key] { entries.filter { $0.value.sid == nil }.map(\.key) }

    /// The keys held, with their holders (for tests and logs).
    var holders: [Key: Int] { entries.mapValues(\.holders) }

    /// True when publication `counter` of `origin` is new to `group` (and remembers it); false for a copy the group
    /// had through another of its patterns, and for a group not held.
    mutating func accept(origin: String, counter: UInt64, group: String) -> Bool {
        groups[ExactName(group)]?.origins.accept(origin: origin, counter: counter) ?? false
    }
}
