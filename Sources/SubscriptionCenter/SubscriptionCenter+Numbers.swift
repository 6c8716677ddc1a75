import SubscriptionWire

extension SubscriptionCenter {
    /// Creates a number, retained (it keeps its latest message, see ``retainedSlot(of:)``) or plain. Returns true
    /// when it was created, false when it existed already (it then keeps the kind it has).
    ///
    /// Throws ``CenterError/invalidName(_:_:)`` for a name that is not a valid number, and ``CenterError/limit(_:)``
    /// when ``Limits/maxNumbers`` numbers exist already (the daemon's own `$SYS.` numbers do not count; which client
    /// may create one is the server's policy, not the center's).
    @discardableResult
    @inlinable public func create(_ number: String, retained: Bool = false) throws(CenterError) -> Bool {
        do {
            try Names.checkNumber(number)
        } catch {
            throw .invalidName(number, error)
        }
        let key = NameKey(number)
        if numbers[key] != nil { return false }
        let system = Names.isSystem(number)
        guard system || clientNumberCount < limits.maxNumbers else {
            throw .limit("at most \(limits.maxNumbers) numbers may exist")
        }
        numbers[key] = NumberEntry(retained: retained)
        sortedNumbers = nil
        if retained { retainedNumberCount += 1 }
        if system { systemNumberCount += 1 }
        return true
    }

    /// Removes the number. Its exact subscriptions are dropped; wildcard subscriptions that matched it stay.
    ///
    /// Each live customer that had an exact subscription to it is told with ``Customer/numberRemoved(_:)`` (the
    /// daemon's `GONE`), once the number is gone; those customers are returned. Throws
    /// ``CenterError/notFound(_:)`` when no such number exists.
    @discardableResult
    @inlinable public func remove(_ number: String) throws(CenterError) -> [any Customer<Message>] {
        let key = NameKey(number)
        guard let entry = numbers.removeValue(forKey: key) else { throw .notFound(number) }
        removalCount &+= 1
        sentEntries.forget(entry)
        sortedNumbers = nil
        if entry.retained != nil { retainedNumberCount -= 1 }
        if Names.isSystem(number) { systemNumberCount -= 1 }
        var gone: [any Customer<Message>] = []
        for subscription in entry.subscribers.removeAll() {
            forget(subscription)
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
    @inlinable public func contains(_ number: String) -> Bool {
        numbers[NameKey(number)] != nil
    }

    /// A retained number's current value and revision; nil for a plain number. Throws ``CenterError/notFound(_:)``
    /// when the number does not exist.
    @inlinable public func retainedSlot(of number: String) throws(CenterError) -> RetainedSlot<Message>? {
        guard let entry = numbers[NameKey(number)] else { throw .notFound(number) }
        return entry.retained
    }

    /// A retained number's current revision (0 before its first message); nil for a plain number. Throws
    /// ``CenterError/notFound(_:)`` when the number does not exist. ``retainedSlot(of:)`` without the value.
    @inlinable public func retainedRevision(of number: String) throws(CenterError) -> UInt64? {
        guard let entry = numbers[NameKey(number)] else { throw .notFound(number) }
        return entry.retained?.revision
    }

    /// The current values of the retained numbers that match `pattern`, in byte order of the numbers, skipping those
    /// with nothing sent yet and, with `from`, those whose value another sender sent (what a new subscription to
    /// `pattern` is told first). An invalid pattern matches nothing.
    @inlinable public func retainedValues(
        matching pattern: String, from: String? = nil
    ) -> [(number: String, slot: RetainedSlot<Message>)] {
        guard retainedNumberCount > 0, let hasWildcard = try? Names.checkPattern(pattern) else { return [] }
        let keys: [NameKey]
        if hasWildcard {
            if sortedNumbers == nil { sortedNumbers = numbers.keys.sorted() }
            keys = (sortedNumbers ?? []).filter { Names.matches(pattern: pattern, number: $0.string) }
        } else {
            keys = [NameKey(pattern)]
        }
        var values: [(number: String, slot: RetainedSlot<Message>)] = []
        for key in keys {
            guard let slot = numbers[key]?.retained, slot.value != nil else { continue }
            if let from, !Self.sameName(from, slot.sender) { continue }
            values.append((key.string, slot))
        }
        return values
    }

    /// The existing numbers that match the pattern (`>`, the default, matches all but the daemon's own `$SYS.` numbers,
    /// as in ``Names/matches(pattern:number:)``), sorted by number, each with ``subscriberCount(of:)``. Throws
    /// ``CenterError/invalidName(_:_:)`` for an invalid pattern.
    @inlinable public func list(matching pattern: String = ">") throws(CenterError) -> [NumberInfo] {
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
            names =
                pattern == ">" && systemNumberCount == 0
                ? all : all.filter { Names.matches(pattern: pattern, number: $0.string) }
        } else {
            names = numbers[NameKey(pattern)] == nil ? [] : [NameKey(pattern)]
        }
        return names.map { key in
            NumberInfo(
                number: key.string, subscribers: subscriberCount(of: key.string),
                retainedRevision: numbers[key]?.retained?.revision)
        }
    }
}

extension SubscriptionCenter {
    /// Puts back a retained number's value as it was before a restart (the daemon's saved state): its revision, the
    /// message and its sender. Nobody is told; the next send gets `revision + 1`. Returns false, changing nothing,
    /// for a plain number. Throws ``CenterError/notFound(_:)`` when the number does not exist.
    @discardableResult
    @inlinable public func restoreRetainedValue(
        of number: String, revision: UInt64, value: Message, sender: String?
    ) throws(CenterError) -> Bool {
        guard let entry = numbers[NameKey(number)] else { throw .notFound(number) }
        guard entry.retained != nil else { return false }
        entry.retained = RetainedSlot(revision: revision, value: value, sender: sender)
        return true
    }
}

extension SubscriptionCenter {
    /// False when a send to `number` would certainly reach nobody: it does not exist, or it has no exact
    /// subscriber and no wildcard subscription exists at all. A cheap test, safe during a delivery, for a sender
    /// that would otherwise prepare a message for nobody.
    @inlinable public func mayHaveSubscribers(_ number: String) -> Bool {
        guard let entry = numbers[NameKey(number)] else { return false }
        return !entry.subscribers.items.isEmpty || !trie.isEmpty
    }
}
