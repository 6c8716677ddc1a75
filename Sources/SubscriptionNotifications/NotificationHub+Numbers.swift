import SubscriptionCenter

extension NotificationHub {
    /// Creates the number `number`, retained (it keeps its latest post as its value, see ``value(of:)`` and
    /// ``watch(_:bufferLimit:)``) or plain. Returns true when it was created, false when it existed already (it then
    /// keeps the kind it has).
    ///
    /// ```swift
    /// try hub.create("CART.changes")                 // true
    /// try hub.create("CART.count", retained: true)   // true
    /// ```
    ///
    /// - Throws: ``HubError/invalidName(_:_:)`` for a name that is not a valid number (`A..B`, `A.*`).
    @discardableResult
    public func create(_ number: String, retained: Bool = false) throws(HubError) -> Bool {
        try HubRules.checkNumber(number)
        return try locked { state throws(HubError) in
            do throws(CenterError) {
                return try state.center.create(number, retained: retained)
            } catch {
                throw HubError(error)
            }
        }
    }

    /// Removes the number `number`, and with it its retained value. Its exact observers learn it, as subd's
    /// `GONE`: a stream or watch ends after what it holds, a closure observer gets its `whenRemoved`; they are then
    /// ended. Wildcard observers stay. Returns how many observers were told.
    ///
    /// ```swift
    /// try hub.remove("CART.changes")   // 1: one observer's stream ends
    /// ```
    ///
    /// - Throws: ``HubError/notFound(_:)`` when no such number exists.
    @discardableResult
    public func remove(_ number: String) throws(HubError) -> Int {
        try HubRules.checkNumber(number)
        return try locked { state throws(HubError) in
            do throws(CenterError) {
                return try state.center.remove(number).count
            } catch {
                throw HubError(error)
            }
        }
    }

    /// Whether the number `number` exists.
    ///
    /// ```swift
    /// if !hub.contains("CART.changes") { try hub.create("CART.changes") }
    /// ```
    public func contains(_ number: String) -> Bool {
        locked { state in state.center.contains(number) }
    }

    /// How many observers a post to `number` would reach now: exact and wildcard ones, each once, `from` filters
    /// ignored, a queue group's members each counted (as subd's `LIST`). 0 when the number does not exist. Observers
    /// that ended (a cancelled token, a deallocated weak observer, an ended stream) are never counted.
    ///
    /// ```swift
    /// var token: ObservationToken? = try hub.addObserver(for: "CART.>") { _ in }
    /// hub.observerCount(of: "CART.changes")   // 1
    /// token = nil
    /// hub.observerCount(of: "CART.changes")   // 0
    /// ```
    public func observerCount(of number: String) -> Int {
        locked { state in
            state.sweepGoneObservers()
            return state.center.subscriberCount(of: number)
        }
    }

    /// How many observers the hub has, over every number and pattern (ended ones never counted).
    ///
    /// ```swift
    /// hub.observerCount   // 0 once every token was released and every stream ended
    /// ```
    public var observerCount: Int {
        locked { state in
            state.sweepGoneObservers()
            return state.subscribers.count
        }
    }

    /// The current value of the retained number `number` with its revision, or nil when nothing was posted to it
    /// yet (revision 0).
    ///
    /// ```swift
    /// try hub.create("PRICE", retained: true)
    /// try hub.post("PRICE", text: "12.5")
    /// try hub.value(of: "PRICE")?.text       // "12.5"
    /// try hub.value(of: "PRICE")?.revision   // 1
    /// ```
    ///
    /// - Throws: ``HubError/notFound(_:)`` when the number does not exist, ``HubError/notRetained(_:)`` when it is a
    ///   plain number.
    public func value(of number: String) throws(HubError) -> RetainedValue? {
        try HubRules.checkNumber(number)
        return try locked { state throws(HubError) in
            let slot: RetainedSlot<Posting>?
            do throws(CenterError) {
                slot = try state.center.retainedSlot(of: number)
            } catch {
                throw HubError(error)
            }
            guard let slot else { throw .notRetained(number) }
            return slot.value.flatMap { RetainedValue($0, number: number) }
        }
    }
}
