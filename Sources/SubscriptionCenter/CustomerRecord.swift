import SubscriptionWire

/// The center's record of one customer: a weak reference to it and the patterns it is subscribed to (the
/// customer → subscriptions half of the two-way index).
///
/// A record whose weak reference reads nil belongs to a released customer: it is purged the first time it is seen.
/// Records are never shared between customers, even when a new customer gets the address of a dead one.
///
/// **Exclusivity.** Its `#if !DEBUG @exclusivity(unchecked)` properties keep the invariant stated on
/// ``SubscriptionCenter`` (release builds skip their checks; debug builds check them).
@usableFromInline final class CustomerRecord<Message> {
    /// A customer held weakly (``CustomerRetention/weak``); nil once its owner released it.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline weak var weakCustomer: (any Customer<Message>)?
    /// A customer held until it is removed (``CustomerRetention/untilRemoved``); no weak reference is made to it.
    @usableFromInline let retainedCustomer: (any Customer<Message>)?
    /// The key of this record in ``SubscriptionCenter/customers`` (the customer's identity when it was added).
    @usableFromInline let key: ObjectIdentifier
    /// The stamp of the last send that delivered to this customer (at-most-once per send).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var lastStamp: UInt64 = 0
    /// Every pattern subscribed to, and whether it holds a wildcard (then it lives in the trie, else on the number).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var patterns: [NameKey: Bool] = [:]

    @inlinable init(_ customer: any Customer<Message>) {
        switch customer.retention {
        case .weak:
            self.retainedCustomer = nil
            self.weakCustomer = customer
        case .untilRemoved:
            self.retainedCustomer = customer
        }
        self.key = ObjectIdentifier(customer)
    }

    /// The customer, or nil once the owner of a weakly held one released it.
    @inline(__always)
    @inlinable var customer: (any Customer<Message>)? {
        retainedCustomer ?? weakCustomer
    }
}

/// One subscription of one customer to one number or wildcard pattern. A class, so that a send that iterates a
/// snapshot of the subscribers sees a concurrent unsubscribe (``isActive``) or a new `from` filter.
///
/// **Exclusivity.** Its `#if !DEBUG @exclusivity(unchecked)` properties keep the invariant stated on
/// ``SubscriptionCenter`` (release builds skip their checks; debug builds check them).
@usableFromInline final class Subscription<Message> {
    /// Whose subscription this is.
    @usableFromInline let record: CustomerRecord<Message>
    /// The sender filter; nil means any sender.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var from: String?
    /// The queue group: of all the group's subscriptions that match a message, one receives it; nil for none.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var group: String?
    /// False once the subscription was removed; snapshots still holding it skip it.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    @usableFromInline var isActive = true

    @inlinable init(record: CustomerRecord<Message>, from: String?, group: String?) {
        self.record = record
        self.from = from
        self.group = group
    }
}

/// Deduplication of customers within one pass over subscribers (a send or a count).
///
/// The outermost pass uses a stamp written into each record, which costs no allocation. A pass started while a
/// send is delivering (re-entrancy from `receive`) must not overwrite the outer pass's stamps, so it keeps a set.
@usableFromInline struct Visits<Message> {
    /// The stamp of this pass, or 0 when this pass uses ``seen`` instead.
    @usableFromInline let stamp: UInt64
    /// Made by the first ``insert(_:)`` of a nested pass: the outermost pass (every send but one made from inside a
    /// `receive`) never makes it, and so has no collection to release.
    @usableFromInline var seen: Set<ObjectIdentifier>?

    @inlinable init(stamp: UInt64) {
        self.stamp = stamp
    }

    /// Whether the record was already marked in this pass.
    @inline(__always)
    @inlinable func contains(_ record: CustomerRecord<Message>) -> Bool {
        stamp != 0 ? record.lastStamp == stamp : seen?.contains(ObjectIdentifier(record)) == true
    }

    /// Marks the record as visited in this pass.
    @inline(__always)
    @inlinable mutating func insert(_ record: CustomerRecord<Message>) {
        if stamp != 0 {
            record.lastStamp = stamp
        } else {
            if seen == nil { seen = [] }
            seen!.insert(ObjectIdentifier(record))
        }
    }
}
