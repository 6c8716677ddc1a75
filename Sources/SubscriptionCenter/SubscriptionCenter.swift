import SubscriptionWire

/// The subscription service center: named subscription numbers, customers subscribed to numbers or wildcard
/// patterns, and the fan-out of a message sent to a number to every matching customer. See ``Observer`` for the
/// NSNotificationCenter idea it grew from.
///
/// - Numbers are created and removed explicitly (``create(_:)``, ``remove(_:)``).
/// - Customers are held **weakly** by default: a released customer is never called again and is not counted
///   anywhere. As Swift has no hook for a weak reference going nil, dead entries are pruned lazily by whichever
///   operation meets them. A customer whose owner ends it explicitly may ask to be held until it is removed
///   (``CustomerRetention/untilRemoved``; the daemon's sessions do), which spares every delivery a weak load.
/// - Subscriptions are indexed both ways (as in redis `pubsub.c`): number or pattern → subscribers, and customer →
///   its patterns, so ``removeAll(_:)`` costs time proportional to the customer's own subscriptions.
/// - Wildcard patterns live in a token trie with a bounded, generation-checked cache of match results (as in
///   nats-server `sublist.go`). When no wildcard subscription exists, a send never touches the trie or the cache.
/// - A send allocates nothing in steady state: a customer reached by several subscriptions is skipped by a stamp.
///
/// **Not thread-safe, and deliberately not `Sendable`**: one owner (the daemon's serial queue) must make every call.
/// A customer's ``Customer/receive(_:on:)`` may call back into the center on that same queue.
///
/// **Exclusivity.** The stored properties marked `@exclusivity(unchecked)` under `#if !DEBUG` skip the runtime
/// exclusivity checks in release builds (a few percent of every delivery). Their invariant: one owner makes every call
/// (this type is not Sendable), and no method keeps an inout access to one of them across a call that can reach it
/// again (a customer's `receive` that calls back into the center works on copies: see the snapshots in `send`). Debug
/// builds, which `make test` runs, keep the checks, so every test checks the invariant.
public final class SubscriptionCenter<Message> {
    /// Limits that protect the daemon; the default is no limit.
    public struct Limits: Sendable, Equatable {
        /// The most subscriptions one customer may hold at once.
        public var maxSubscriptionsPerCustomer: Int
        /// The most numbers that may exist at once.
        public var maxNumbers: Int

        /// Makes limits; the defaults are unlimited.
        @inlinable public init(maxSubscriptionsPerCustomer: Int = .max, maxNumbers: Int = .max) {
            self.maxSubscriptionsPerCustomer = maxSubscriptionsPerCustomer
            self.maxNumbers = maxNumbers
        }
    }

    /// The limits in force. Lowering one does not drop anything that exists; it only refuses new things.
    public var limits: Limits

    /// The numbers; each holds its exact subscriptions.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var numbers: [NameKey: NumberEntry<Message>] = [:]
    /// The entries the latest sends found (``entry(forSending:)``); an entry is forgotten with its number.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var sentEntries = SentEntryCache<Message>()
    /// The numbers in byte order, dropped when one is created or removed (LIST need not sort every time).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var sortedNumbers: [NameKey]?
    /// How many of the numbers are the daemon's own (their first token is `$SYS`).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var systemNumberCount = 0
    /// How many of the numbers are retained (a subscription looks for current values only when some are).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var retainedNumberCount = 0
    /// How many numbers were removed so far: a caller that remembered that a number exists need not look it up again
    /// while this has not changed (an MQTT publisher's topic, published to again and again).
    @inlinable public var removals: UInt64 { removalCount }
    @usableFromInline var removalCount: UInt64 = 0
    /// The queue groups that have subscriptions, by name (bytes: canonically equivalent spellings are different
    /// groups), each with its subscription count and round-robin turn. A group's entry goes with its last
    /// subscription, so clients that churn ever-new group names leave nothing behind.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var queueGroups: [NameKey: QueueGroup] = [:]
    /// Every customer with at least one subscription, keyed by the customer's identity when it was added.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var customers: [ObjectIdentifier: CustomerRecord<Message>] = [:]
    /// The wildcard subscriptions.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var trie = WildcardTrie<Message>()
    /// Wildcard match results per number.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var matchCache: MatchCache<Message>
    /// The stamp of the latest outermost pass (see ``Visits``).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var stamp: UInt64 = 0
    /// How many sends are delivering right now (more than one when `receive` sends again).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var deliveryDepth = 0

    /// Makes an empty center.
    @inlinable public init(limits: Limits = Limits()) {
        self.limits = limits
        self.matchCache = MatchCache(capacity: 4096)
    }

    /// Makes an empty center with a given match cache size (for tests).
    @inlinable init(limits: Limits = Limits(), matchCacheCapacity: Int) {
        self.limits = limits
        self.matchCache = MatchCache(capacity: matchCacheCapacity)
    }

    /// How many numbers exist, the daemon's own (`$SYS.`) included.
    @inlinable public var numberCount: Int { numbers.count }

    /// How many numbers exist that clients created: all but the daemon's own (see ``Names/isSystem(_:)``). This is
    /// what ``Limits/maxNumbers`` bounds and what `STATS` reports.
    @inlinable public var clientNumberCount: Int { numbers.count - systemNumberCount }

    /// How many subscriptions live customers hold, all customers together.
    @inlinable public var subscriptionCount: Int {
        pruneDeadCustomers()
        return customers.values.reduce(0) { $0 + $1.patterns.count }
    }

    /// How many live customers hold at least one subscription.
    @inlinable public var customerCount: Int {
        pruneDeadCustomers()
        return customers.count
    }

    // MARK: - Internals shared by the extensions

    /// Starts a pass over subscribers that must meet each customer at most once.
    @inlinable func beginVisits() -> Visits<Message> {
        guard deliveryDepth == 0 else { return Visits(stamp: 0) }
        stamp &+= 1
        return Visits(stamp: stamp)
    }

    /// The record of this very customer, if it has one. A record under its identity that belongs to a released
    /// customer (whose address this one now has) is purged.
    @inlinable func record(of customer: any Customer<Message>) -> CustomerRecord<Message>? {
        guard let record = customers[ObjectIdentifier(customer)] else { return nil }
        if record.customer === customer { return record }
        purge(record)
        return nil
    }

    /// Drops every subscription of the record and the record itself.
    @inlinable func purge(_ record: CustomerRecord<Message>) {
        for (pattern, isWildcard) in record.patterns {
            if isWildcard {
                forget(trie.remove(record, tokens: NameKey.tokens(of: pattern.string)))
                matchCache.forgetAll()
            } else {
                forget(numbers[pattern]?.subscribers.remove(record))
            }
        }
        record.patterns = [:]
        if customers[record.key] === record { customers[record.key] = nil }
    }

    /// Keeps ``queueGroups`` right when a subscription goes.
    @inlinable func forget(_ subscription: Subscription<Message>?) {
        if let subscription { leave(subscription.group) }
    }

    /// Counts a new subscription in `group` (nil: in none).
    @inlinable func join(_ group: String?) {
        guard let group else { return }
        queueGroups[NameKey(group), default: QueueGroup()].subscriptions += 1
    }

    /// Uncounts a subscription that leaves `group` (nil: in none); the group's entry, its turn with it, goes with
    /// its last subscription.
    @inlinable func leave(_ group: String?) {
        guard let group else { return }
        guard let index = queueGroups.index(forKey: NameKey(group)) else {
            preconditionFailure("a subscription leaves the queue group '\(group)', which has none")
        }
        queueGroups.values[index].subscriptions -= 1
        if queueGroups.values[index].subscriptions == 0 { queueGroups.remove(at: index) }
    }

    /// Moves a subscription into `group` (nil: out of any) when that is another group, by bytes.
    @inlinable func changeGroup(of subscription: Subscription<Message>, to group: String?) {
        switch (subscription.group, group) {
        case (nil, nil): return
        case (let old?, let new?) where NameKey(old) == NameKey(new): return
        default: break
        }
        leave(subscription.group)
        join(group)
        subscription.group = group
    }

    /// Drops the record when it has no subscription left (empty entries are never kept).
    @inlinable func forgetIfUnsubscribed(_ record: CustomerRecord<Message>) {
        if record.patterns.isEmpty && customers[record.key] === record { customers[record.key] = nil }
    }

    /// Purges every record whose customer was released.
    @inlinable func pruneDeadCustomers() {
        for record in customers.values where record.customer == nil { purge(record) }
    }
}

/// A center belongs to one owner and is never shared across concurrency domains.
@available(*, unavailable)
extension SubscriptionCenter: Sendable {}

/// One existing number and its exact subscriptions.
///
/// **Exclusivity.** Its `#if !DEBUG @exclusivity(unchecked)` properties keep the invariant stated on
/// ``SubscriptionCenter`` (release builds skip their checks; debug builds check them).
@usableFromInline final class NumberEntry<Message> {
    /// The customers subscribed to exactly this number.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var subscribers = SubscriberList<Message>()
    /// For a retained number, its current value; nil for a plain one.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var retained: RetainedSlot<Message>?

    @inlinable init(retained: Bool) {
        self.retained = retained ? RetainedSlot() : nil
    }
}

/// One queue group with subscriptions: how many, and how many messages it was given (the round-robin turn).
@usableFromInline struct QueueGroup {
    /// Its subscriptions, over every number and pattern; at least 1 (a group with none has no entry).
    @usableFromInline var subscriptions = 0
    /// The messages it was given so far; the next one goes to the member at this turn (modulo the members).
    @usableFromInline var turn: UInt = 0

    /// A group with no subscription counted yet.
    @inlinable init() {}
}

/// A retained number's current value: the latest message sent to it, with its sender and revision (KVO's "new").
public struct RetainedSlot<Message> {
    /// How many messages were sent to the number; the current value's revision. 0 before the first.
    public var revision: UInt64 = 0
    /// The latest message, nil before the first.
    public var value: Message?
    /// Who sent it.
    public var sender: String?

    /// A slot at `revision` holding `value` from `sender`; empty by default (revision 0, no value).
    @inlinable init(revision: UInt64 = 0, value: Message? = nil, sender: String? = nil) {
        self.revision = revision
        self.value = value
        self.sender = sender
    }
}
