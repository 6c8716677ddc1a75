import SubscriptionWire

extension SubscriptionCenter {
    /// Creates a number. Returns true when it was created, false when it existed already.
    ///
    /// Throws ``CenterError/invalidName(_:_:)`` for a name that is not a valid number, and ``CenterError/limit(_:)``
    /// when ``Limits/maxNumbers`` numbers exist already.
    @discardableResult
    public func create(_ number: String) throws(CenterError) -> Bool {
        do {
            try Names.checkNumber(number)
        } catch {
            throw .invalidName(number, error)
        }
        let key = NameKey(number)
        if numbers[key] != nil { return false }
        guard numbers.count < limits.maxNumbers else {
            throw .limit("at most \(limits.maxNumbers) numbers may exist")
        }
        numbers[key] = NumberEntry()
        sortedNumbers = nil
        return true
    }

    /// Removes the number. Its exact subscriptions are dropped; wildcard subscriptions that matched it stay.
    ///
    /// Each live customer that had an exact subscription to it is told with ``Customer/numberRemoved(_:)`` (the
    /// daemon's `GONE`), once the number is gone; those customers are returned. Throws
    /// ``CenterError/notFound(_:)`` when no such number exists.
    @discardableResult
    public func remove(_ number: String) throws(CenterError) -> [any Customer<Message>] {
        let key = NameKey(number)
        guard let entry = numbers.removeValue(forKey: key) else { throw .notFound(number) }
        sortedNumbers = nil
        var gone: [any Customer<Message>] = []
        for subscription in entry.subscribers.removeAll() {
            let record = subscription.record
            record.patterns[key] = nil
            if let customer = record.customer {
                gone.append(customer)
                forgetIfUnsubscribed(record)
            } else {
                purge(record)
            }
        }
        for customer in gone { customer.numberRemoved(number) }
        return gone
    }

    /// Whether the number exists.
    public func contains(_ number: String) -> Bool {
        numbers[NameKey(number)] != nil
    }

    /// The existing numbers that match the pattern (`>`, the default, matches all), sorted by number, each with
    /// ``subscriberCount(of:)``. Throws ``CenterError/invalidName(_:_:)`` for an invalid pattern.
    public func list(matching pattern: String = ">") throws(CenterError) -> [NumberInfo] {
        let hasWildcard: Bool
        do {
            hasWildcard = try Names.checkPattern(pattern)
        } catch {
            throw .invalidName(pattern, error)
        }
        let names: [NameKey]
        if hasWildcard {
            if sortedNumbers == nil { sortedNumbers = numbers.keys.sorted() }
            let all = sortedNumbers ?? []
            names = pattern == ">" ? all : all.filter { Names.matches(pattern: pattern, number: $0.string) }
        } else {
            names = numbers[NameKey(pattern)] == nil ? [] : [NameKey(pattern)]
        }
        return names.map { NumberInfo(number: $0.string, subscribers: subscriberCount(of: $0.string)) }
    }
}
