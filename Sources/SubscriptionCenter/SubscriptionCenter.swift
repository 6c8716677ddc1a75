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
public final class SubscriptionCenter<Message> {
    /// Limits that protect the daemon; the default is no limit.
    public struct Limits: Sendable, Equatable {
        /// The most subscriptions one customer may hold at once.
        public var maxSubscriptionsPerCustomer: Int
        /// The most numbers that may exist at once.
        public var maxNumbers: Int

        /// Makes limits; the defaults are unlimited.
        public init(maxSubscriptionsPerCustomer: Int = .max, maxNumbers: Int = .max) {
            self.maxSubscriptionsPerCustomer = maxSubscriptionsPerCustomer
            self.maxNumbers = maxNumbers
        }
    }

    /// The limits in force. Lowering one does not drop anything that exists; it only refuses new things.
    public var limits: Limits

    /// The numbers; each holds its exact subscriptions.
    var numbers: [NameKey: NumberEntry<Message>] = [:]
    /// The entries the latest sends found (``entry(forSending:)``); an entry is forgotten with its number.
    var sentEntries = SentEntryCache<Message>()
    /// The numbers in byte order, dropped when one is created or removed (LIST need not sort every time).
    var sortedNumbers: [NameKey]?
    /// How many of the numbers are the daemon's own (their first token is `$SYS`).
    var systemNumberCount = 0
    /// How many of the numbers are retained (a subscription looks for current values only when some are).
    var retainedNumberCount = 0
    /// The queue groups that have subscriptions, by name (bytes: canonically equivalent spellings are different
    /// groups), each with its subscription count and round-robin turn. A group's entry goes with its last
    /// subscription, so clients that churn ever-new group names leave nothing behind.
    var queueGroups: [NameKey: QueueGroup] = [:]
    /// Every customer with at least one subscription, keyed by the customer's identity when it was added.
    var customers: [ObjectIdentifier: CustomerRecord<Message>] = [:]
    /// The wildcard subscriptions.
    var trie = WildcardTrie<Message>()
    /// Wildcard match results per number.
    var matchCache: MatchCache<Message>
    /// The stamp of the latest outermost pass (see ``Visits``).
    var stamp: UInt64 = 0
    /// How many sends are delivering right now (more than one when `receive` sends again).
    var deliveryDepth = 0

    /// Makes an empty center.
    public init(limits: Limits = Limits()) {
        self.limits = limits
        self.matchCache = MatchCache(capacity: 4096)
    }

    /// Makes an empty center with a given match cache size (for tests).
    init(limits: Limits = Limits(), matchCacheCapacity: Int) {
        self.limits = limits
        self.matchCache = MatchCache(capacity: matchCacheCapacity)
    }

    /// How many numbers exist, the daemon's own (`$SYS.`) included.
    public var numberCount: Int { numbers.count }

    /// How many numbers exist that clients created: all but the daemon's own (see ``Names/isSystem(_:)``). This is
    /// what ``Limits/maxNumbers`` bounds and what `STATS` reports.
    public var clientNumberCount: Int { numbers.count - systemNumberCount }

    /// How many subscriptions live customers hold, all customers together.
    public var subscriptionCount: Int {
        pruneDeadCustomers()
        return customers.values.reduce(0) { $0 + $1.patterns.count }
    }

    /// How many live customers hold at least one subscription.
    public var customerCount: Int {
        pruneDeadCustomers()
        return customers.count
    }

    // MARK: - Internals shared by the extensions

    /// Starts a pass over subscribers that must meet each customer at most once.
    func beginVisits() -> Visits<Message> {
        guard deliveryDepth == 0 else { return Visits(stamp: 0) }
        stamp &+= 1
        return Visits(stamp: stamp)
    }

    /// The record of this very customer, if it has one. A record under its identity that belongs to a released
    /// customer (whose address this one now has) is purged.
    func record(of customer: any Customer<Message>) -> CustomerRecord<Message>? {
        guard let record = customers[ObjectIdentifier(customer)] else { return nil }
        if record.customer === customer { return record }
        purge(record)
        return nil
    }

    /// Drops every subscription of the record and the record itself.
    func purge(_ record: CustomerRecord<Message>) {
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
    func forget(_ subscription: Subscription<Message>?) {
        if let subscription { leave(subscription.group) }
    }

    /// Counts a new subscription in `group` (nil: in none).
    func join(_ group: String?) {
        guard let group else { return }
        queueGroups[NameKey(group), default: QueueGroup()].subscriptions += 1
    }

    /// Uncounts a subscription that leaves `group` (nil: in none); the group's entry, its turn with it, goes with
    /// its last subscription.
    func leave(_ group: String?) {
        guard let group else { return }
        guard let index = queueGroups.index(forKey: NameKey(group)) else {
            preconditionFailure("a subscription leaves the queue group '\(group)', which has none")
        }
        queueGroups.values[index].subscriptions -= 1
        if queueGroups.values[index].subscriptions == 0 { queueGroups.remove(at: index) }
    }

    /// Moves a subscription into `group` (nil: out of any) when that is another group, by bytes.
    func changeGroup(of subscription: Subscription<Message>, to group: String?) {
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
    func forgetIfUnsubscribed(_ record: CustomerRecord<Message>) {
        if record.patterns.isEmpty && customers[record.key] === record { customers[record.key] = nil }
    }

    /// Purges every record whose customer was released.
    func pruneDeadCustomers() {
        for record in customers.values where record.customer == nil { purge(record) }
    }
}

/// A center belongs to one owner and is never shared across concurrency domains.
@available(*, unavailable)
extension SubscriptionCenter: Sendable {}

/// One existing number and its exact subscriptions.
final class NumberEntry<Message> {
    /// The customers subscribed to exactly this number.
    var subscribers = SubscriberList<Message>()
    /// For a retained number, its current value; nil for a plain one.
    var retained: RetainedSlot<Message>?

    init(retained: Bool) {
        self.retained = retained ? RetainedSlot() : nil
    }
}

/// One queue group with subscriptions: how many, and how many messages it was given (the round-robin turn).
struct QueueGroup {
    /// Its subscriptions, over every number and pattern; at least 1 (a group with none has no entry).
    var subscriptions = 0
    /// The messages it was given so far; the next one goes to the member at this turn (modulo the members).
    var turn: UInt = 0
}

/// A retained number's current value: the latest message sent to it, with its sender and revision (KVO's "new").
public struct RetainedSlot<Message> {
    /// How many messages were sent to the number; the current value's revision. 0 before the first.
    public internal(set) var revision: UInt64 = 0
    /// The latest message, nil before the first.
    public internal(set) var value: Message?
    /// Who sent it.
    public internal(set) var sender: String?
}
