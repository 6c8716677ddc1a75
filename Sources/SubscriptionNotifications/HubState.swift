import SubscriptionCenter

/// Everything a ``NotificationHub`` guards with its lock: the center, the subscriber of each registration, and the
/// outbox its deliveries go through. Touched only under the lock; not `Sendable`, and it needs not be: the lock
/// (``HubLock``) owns it, and the compiler checks that nothing outside keeps a reference into it.
final class HubState {
    let center = SubscriptionCenter<Posting>()
    let outbox = Outbox()
    /// Every registration in the center, by its identity.
    private(set) var subscribers: [ObjectIdentifier: Subscriber] = [:]
    /// The registrations of the weak form, looked up by the counts (their observers may have gone since).
    private var weakRegistrations: Set<ObjectIdentifier> = []
    /// When there are this many weak registrations, a new one sweeps the gone ones first (then twice as many as
    /// remain), so weak observers that go without a post or a count reaching them cannot pile up.
    private var sweepAt = 64

    /// Subscribes `registration` to `pattern`, then hands it the current value of every retained number the pattern
    /// matches (in byte order of the numbers, as subd's `SUB` does).
    func add(
        _ registration: Registration, to pattern: String, from sender: String?, group: String?
    ) throws(CenterError) {
        let current = center.retainedValues(matching: pattern, from: sender)
        try subscribe(registration, to: pattern, from: sender, group: group)
        for (number, slot) in current {
            guard let value = slot.value else { continue }
            outbox.deliver(value, on: number, group: nil, to: registration)
        }
    }

    /// Subscribes a watch to the retained number `number`, hands it the current value if it has one, and returns
    /// the number's revision.
    func addWatch(_ registration: Registration, to number: String) throws(HubError) -> Int {
        let slot: RetainedSlot<Posting>?
        do { slot = try center.retainedSlot(of: number) } catch { throw HubError(error) }
        guard let slot else { throw .notRetained(number) }
        do { try subscribe(registration, to: number, from: nil, group: nil) } catch { throw HubError(error) }
        if let value = slot.value {
            outbox.deliver(value, on: number, group: nil, to: registration)
        }
        return Int(slot.revision)
    }

    private func subscribe(
        _ registration: Registration, to pattern: String, from sender: String?, group: String?
    ) throws(CenterError) {
        let subscriber = Subscriber(registration, outbox: outbox)
        try center.add(subscriber, to: pattern, from: sender, group: group)
        let key = ObjectIdentifier(registration)
        subscribers[key] = subscriber
        guard registration.isWeak else { return }
        if weakRegistrations.count >= sweepAt {
            sweepGoneObservers()
            sweepAt = max(64, 2 * weakRegistrations.count)
        }
        weakRegistrations.insert(key)
    }

    /// Takes the registration out of the center, if it is still there.
    func forget(_ registration: Registration) {
        let key = ObjectIdentifier(registration)
        guard let subscriber = subscribers.removeValue(forKey: key) else { return }
        center.removeAll(subscriber)
        weakRegistrations.remove(key)
        outbox.work.ended.append(registration)
    }

    /// Takes out every registration whose weak observer was deallocated, so that counts never include one.
    func sweepGoneObservers() {
        var gone: [Registration] = []
        for key in weakRegistrations {
            guard let registration = subscribers[key]?.registration else { continue }
            if !registration.observerIsAlive(keepAlive: &outbox.work.keepAlive) { gone.append(registration) }
        }
        for registration in gone { forget(registration) }
    }

    /// The hub is being deallocated: every stream and watch gets its last item (a handler, nothing).
    func endAll() {
        for subscriber in subscribers.values {
            if subscriber.registration.handler == nil { outbox.deliver(.hubEnded, to: subscriber.registration) }
        }
    }

    /// Finishes a call: forgets the observers found gone and those whose number was removed, and hands out what
    /// remains to do once the lock is dropped.
    func takeWork() -> HubWork {
        let gone = outbox.gone
        outbox.gone = []
        for registration in gone { forget(registration) }
        for registration in outbox.removed {
            // The center dropped the subscription already (each registration has one pattern).
            let key = ObjectIdentifier(registration)
            subscribers[key] = nil
            weakRegistrations.remove(key)
            outbox.work.ended.append(registration)
        }
        outbox.removed = []
        let work = outbox.work
        outbox.work = HubWork()
        return work
    }
}
