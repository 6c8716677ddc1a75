import SubscriptionWire

/// The subscriptions hanging off one number or one trie node: an array for fast iteration, plus an index from
/// customer record to array position for O(1) lookup and swap-removal.
///
/// Records, not customers, are the keys: a record is kept alive by its subscriptions, so its identity cannot be
/// reused while it is listed here (a customer's address can, once it is released).
@usableFromInline struct SubscriberList<Message> {
    /// The subscriptions, in no particular order.
    @usableFromInline var items: [Subscription<Message>] = []
    @usableFromInline var positions: [ObjectIdentifier: Int] = [:]

    /// An empty list.
    @inlinable init() {}

    /// Whether nothing is subscribed here.
    @inlinable var isEmpty: Bool { items.isEmpty }

    /// The record's subscription here, if any.
    @inlinable func subscription(of record: CustomerRecord<Message>) -> Subscription<Message>? {
        positions[ObjectIdentifier(record)].map { items[$0] }
    }

    /// Adds a subscription whose record has none here yet.
    @inlinable mutating func append(_ subscription: Subscription<Message>) {
        let key = ObjectIdentifier(subscription.record)
        precondition(positions[key] == nil, "a customer record is subscribed twice to the same pattern")
        positions[key] = items.count
        items.append(subscription)
    }

    /// Removes and deactivates the record's subscription here; nil when it had none.
    @discardableResult
    @inlinable mutating func remove(_ record: CustomerRecord<Message>) -> Subscription<Message>? {
        guard let position = positions.removeValue(forKey: ObjectIdentifier(record)) else { return nil }
        let removed = items[position]
        let last = items.removeLast()
        if position < items.count {
            items[position] = last
            positions[ObjectIdentifier(last.record)] = position
        }
        removed.isActive = false
        return removed
    }

    /// Removes and deactivates everything, returning what was there.
    @inlinable mutating func removeAll() -> [Subscription<Message>] {
        let removed = items
        for subscription in removed { subscription.isActive = false }
        items = []
        positions = [:]
        return removed
    }
}
