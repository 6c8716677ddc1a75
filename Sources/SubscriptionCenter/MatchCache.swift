import SubscriptionWire

/// A bounded cache of trie match results per number, as in nats-server's sublist cache.
///
/// Entries are valid for one trie generation: when the trie changed since they were stored, the whole cache is
/// dropped on the next lookup. When full, it is cleared rather than evicting one by one. When a subscription leaves
/// the trie, the center drops the cache at once (``forgetAll()``): a cached result holds its subscriptions, and
/// through them customers the center holds until they are removed, which must not outlive their removal.
@usableFromInline struct MatchCache<Message> {
    /// The most numbers remembered at once.
    @usableFromInline let capacity: Int
    @usableFromInline var results: [NameKey: [Subscription<Message>]] = [:]
    @usableFromInline var generation: UInt64 = 0

    /// How many numbers are remembered.
    @inlinable var count: Int { results.count }

    @inlinable init(capacity: Int) {
        precondition(capacity > 0, "a match cache needs room for at least one entry")
        self.capacity = capacity
    }

    /// Drops every cached result.
    @inlinable mutating func forgetAll() {
        results.removeAll(keepingCapacity: true)
    }

    /// The wildcard subscriptions matching the number, from the cache or from a walk of the trie.
    @inlinable mutating func matches(for number: String, in trie: inout WildcardTrie<Message>) -> [Subscription<
        Message
    >] {
        if generation != trie.generation {
            results.removeAll(keepingCapacity: true)
            generation = trie.generation
        }
        let key = NameKey(number)
        if let cached = results[key] { return cached }
        var found: [Subscription<Message>] = []
        trie.collect(matching: NameKey.tokens(of: number), into: &found)
        if results.count >= capacity { results.removeAll(keepingCapacity: true) }
        results[key] = found
        return found
    }
}
