import SubscriptionWire

extension SubscriptionCenter {
    /// Subscribes the customer to a number or a wildcard pattern, optionally only to messages whose sender is `sender`
    /// (the `object:` filter of NSNotificationCenter), optionally as a member of a queue `group` (of all the group's
    /// subscriptions that match a message, one receives it, round-robin).
    ///
    /// An exact number must exist; a pattern holding a wildcard needs nothing to exist. Subscribing again to the same
    /// pattern replaces its `from` filter and its group and adds no duplicate. Throws
    /// ``CenterError/invalidName(_:_:)``, ``CenterError/notFound(_:)``, or ``CenterError/limit(_:)`` when the customer
    /// holds ``Limits/maxSubscriptionsPerCustomer`` subscriptions already. Returns true when the subscription is new,
    /// false when it replaced the customer's subscription to the same pattern (the cluster bridge counts the new
    /// ones).
    @discardableResult
    @inlinable public func add(
        _ customer: any Customer<Message>,
        to pattern: String,
        from sender: String? = nil,
        group: String? = nil
    ) throws(CenterError) -> Bool {
        let isWildcard: Bool
        do {
            isWildcard = try Names.checkPattern(pattern)
        } catch {
            throw .invalidName(pattern, error)
        }
        let key = NameKey(pattern)
        let entry = numbers[key]
        if !isWildcard && entry == nil { throw .notFound(pattern) }
        let tokens = isWildcard ? NameKey.tokens(of: pattern) : []

        let existing = record(of: customer)
        if let existing, existing.patterns[key] != nil {
            let subscription =
                isWildcard
                ? trie.subscription(of: existing, tokens: tokens)
                : entry?.subscribers.subscription(of: existing)
            guard let subscription else { preconditionFailure("the two-way index lost a subscription to \(pattern)") }
            subscription.from = sender
            changeGroup(of: subscription, to: group)
            return false
        }
        let count = existing?.patterns.count ?? 0
        guard count < limits.maxSubscriptionsPerCustomer else {
            throw .limit("at most \(limits.maxSubscriptionsPerCustomer) subscriptions per customer")
        }

        let record: CustomerRecord<Message>
        if let existing {
            record = existing
        } else {
            record = CustomerRecord(customer)
            customers[record.key] = record
        }
        let subscription = Subscription(record: record, from: sender, group: group)
        join(group)
        if isWildcard {
            trie.insert(subscription, tokens: tokens)
        } else {
            entry?.subscribers.append(subscription)
        }
        record.patterns[key] = isWildcard
        return true
    }

    /// Unsubscribes the customer from the pattern. Returns false when it was not subscribed to it; never throws,
    /// not even for an invalid or unknown pattern.
    @discardableResult
    @inlinable public func remove(_ customer: any Customer<Message>, from pattern: String) -> Bool {
        let key = NameKey(pattern)
        guard let record = record(of: customer), let isWildcard = record.patterns[key] else { return false }
        if isWildcard {
            forget(trie.remove(record, tokens: NameKey.tokens(of: pattern)))
            matchCache.forgetAll()
        } else {
            forget(numbers[key]?.subscribers.remove(record))
        }
        record.patterns[key] = nil
        forgetIfUnsubscribed(record)
        return true
    }

    /// Drops every subscription of the customer, in time proportional to its own subscriptions.
    @inlinable public func removeAll(_ customer: any Customer<Message>) {
        // A record under this identity is either the customer's or a released one's: both must go.
        if let record = customers[ObjectIdentifier(customer)] { purge(record) }
    }

    /// The customer's subscription to `pattern` (compared by bytes), nil when it has none.
    @inlinable public func subscription(of customer: any Customer<Message>, to pattern: String) -> SubscriptionInfo? {
        let key = NameKey(pattern)
        guard let record = record(of: customer), let isWildcard = record.patterns[key] else { return nil }
        let subscription =
            isWildcard
            ? trie.subscription(of: record, tokens: NameKey.tokens(of: pattern))
            : numbers[key]?.subscribers.subscription(of: record)
        return SubscriptionInfo(pattern: pattern, from: subscription?.from, group: subscription?.group)
    }

    /// The queue group of each exact subscription to `number` (nil for one in no group), in subscription order; empty
    /// when the number does not exist: what removing the number ends.
    @inlinable public func exactSubscriptionGroups(of number: String) -> [String?] {
        guard let entry = numbers[NameKey(number)] else { return [] }
        return entry.subscribers.items.filter(\.isActive).map(\.group)
    }

    /// The customer's subscriptions, sorted by pattern.
    @inlinable public func subscriptions(of customer: any Customer<Message>) -> [SubscriptionInfo] {
        guard let record = record(of: customer) else { return [] }
        return record.patterns.keys.sorted().map { pattern in
            let subscription =
                record.patterns[pattern]!
                ? trie.subscription(of: record, tokens: NameKey.tokens(of: pattern.string))
                : numbers[pattern]?.subscribers.subscription(of: record)
            return SubscriptionInfo(pattern: pattern.string, from: subscription?.from, group: subscription?.group)
        }
    }
}
