import SubscriptionWire

/// What a node knows of the cluster's retained numbers (docs/CLUSTER.md, "Retained numbers"): which numbers the
/// numbers bucket has as retained, each with its *generation* (the numbers bucket's revision of the create that made
/// it, so a value written before a `REMOVE` and a new `CREATE` is never taken for the new number's), and the latest
/// entry the retained bucket stored for each key. A plain value fed by the two watches and by this node's own
/// writes; the bridge performs what it returns.
struct RetainedCache {
    /// A value the retained bucket stored: a publication to a retained number.
    struct Value: Equatable {
        /// The number's generation when it was written.
        var generation: UInt64
        /// Its revision, the `rev=` every node delivers it with: 1 for a generation's first value, then one more
        /// per publication.
        var revision: UInt64
        /// The publisher's name.
        var sender: String?
        /// The info pairs.
        var info: [InfoPair]
        /// The payload.
        var payload: [UInt8]
        /// The node start that wrote it and its counter (`Subd-Id`).
        var origin: String
        /// The counter.
        var counter: UInt64
    }

    /// The latest entry of a key in the retained bucket.
    struct Stored: Equatable {
        /// The bucket's sequence of the entry (what the next write expects).
        var sequence: UInt64
        /// The value; nil for a delete marker or an entry no node wrote. Once the number's slot on this node holds
        /// it (``RetainedCache/delivered(_:)``) its payload, sender and info are dropped: they are kept once.
        var value: Value?
        /// True once this node's center holds the value.
        var isDelivered = false
    }

    /// What the next write of a number is: at which bucket sequence, as which revision of which generation.
    struct Write: Equatable {
        /// The key's last sequence this node knows (0: none): the write succeeds only if it is still the last.
        var expectedSequence: UInt64
        /// The revision the value gets.
        var revision: UInt64
        /// The number's generation.
        var generation: UInt64
    }

    /// The generation of each number the cluster has as retained.
    private(set) var generations: [String: UInt64] = [:]
    /// The latest entry of each key of the retained bucket.
    private(set) var latest: [String: Stored] = [:]

    /// The numbers bucket has `number` as retained, created at `generation`. Returns the current value to apply to
    /// the number on this node (one of this generation that arrived before the create did), if any.
    mutating func numberCreated(_ number: String, generation: UInt64) -> Value? {
        generations[number] = generation
        guard latest[number]?.isDelivered == false else { return nil }
        return current(number)
    }

    /// `number` is no longer a retained number of the cluster (removed, or plain).
    mutating func numberRemoved(_ number: String) {
        generations[number] = nil
    }

    /// True when the cluster has `number` as retained.
    func isShared(_ number: String) -> Bool {
        !generations.isEmpty && generations[number] != nil
    }

    /// The current value of `number`: the key's latest entry when it belongs to the number's generation (without its
    /// bytes once ``delivered(_:)``).
    func current(_ number: String) -> Value? {
        guard let generation = generations[number], let value = latest[number]?.value, value.generation == generation
        else { return nil }
        return value
    }

    /// The next write of `number`; nil when the cluster has no such retained number.
    func nextWrite(_ number: String) -> Write? {
        guard let generation = generations[number] else { return nil }
        return Write(
            expectedSequence: latest[number]?.sequence ?? 0, revision: (current(number)?.revision ?? 0) + 1,
            generation: generation)
    }

    /// The bucket stored `entry` for `key` (seen through the watch, or this node's own write acknowledged). Returns
    /// the value to deliver on this node: a newer entry, of the number's current generation; nil for an entry known
    /// already (at or below the key's latest sequence), a delete marker, or a value of another generation.
    mutating func stored(_ key: String, _ entry: Stored) -> Value? {
        if let known = latest[key], entry.sequence <= known.sequence { return nil }
        latest[key] = entry
        guard let value = entry.value, generations[key] == value.generation else { return nil }
        return value
    }

    /// This node's center holds the latest value of `key` now: its bytes are not kept twice.
    mutating func delivered(_ key: String) {
        guard var entry = latest[key], var value = entry.value else { return }
        value.payload = []
        value.info = []
        value.sender = nil
        entry.value = value
        entry.isDelivered = true
        latest[key] = entry
    }

    /// The latest sequence this node knows of `key` (0: none).
    func sequence(of key: String) -> UInt64 {
        latest[key]?.sequence ?? 0
    }
}
