import SubscriptionCenter

/// The center's customer for one ``Registration``. It lives only inside the hub's state, behind its lock, and
/// turns every call of the center into a delivery through the ``Outbox``: it runs none of the observer's code.
///
/// Held by the center until the hub removes it (``CustomerRetention/untilRemoved``): its observer's lifetime is
/// its token's, its stream's, or (the weak form) its object's, none of which the center can see.
final class Subscriber: Customer {
    typealias Message = Posting

    let registration: Registration
    private let outbox: Outbox

    init(_ registration: Registration, outbox: Outbox) {
        self.registration = registration
        self.outbox = outbox
    }

    var retention: CustomerRetention { .untilRemoved }

    func receive(_ message: Posting, on number: String) -> Bool {
        outbox.deliver(message, on: number, group: nil, to: registration)
    }

    func receive(_ message: Posting, on number: String, throughGroup group: String) -> Bool {
        outbox.deliver(message, on: number, group: group, to: registration)
    }

    func numberRemoved(_ number: String) {
        outbox.numberRemoved(number, for: registration)
    }
}

/// What one call under the hub's lock leaves to do once the lock is dropped, gathered while the center delivers.
/// One per hub, used by one call at a time (the lock is held for the whole call), emptied by
/// ``HubState/takeWork()``.
final class Outbox {
    /// The work to hand out of the lock.
    var work = HubWork()
    /// Registrations whose weak observer was found deallocated: removed from the center after the send.
    var gone: [Registration] = []

    func deliver(_ posting: Posting, on number: String, group: String?, to registration: Registration) -> Bool {
        switch registration.deliver(posting, on: number, group: group, keepAlive: &work.keepAlive) {
        case .received:
            return true
        case .receivedDrainNeeded:
            work.drains.append(registration)
            return true
        case .notReceived:
            return false
        case .observerGone:
            gone.append(registration)
            return false
        }
    }

    func numberRemoved(_ number: String, for registration: Registration) {
        work.removals.append((registration, number))
    }
}

/// What a call does after it dropped the hub's lock: observers' code and anything whose release might run it.
struct HubWork: Sendable {
    /// Handler mailboxes this call found idle and filled: it runs them.
    var drains: [Registration] = []
    /// Observers whose exact number was removed, to be told.
    var removals: [(Registration, String)] = []
    /// Registrations that left the center during the call: released only after the lock, since a handler's closure
    /// may hold the last reference to a token (whose `deinit` takes the lock).
    var ended: [Registration] = []
    /// Weak observers looked up during the call: released only after the lock, since the last reference may be
    /// ours and an observer's `deinit` may call the hub.
    var keepAlive: [any Sendable] = []

    /// Tells the removals, then runs the mailboxes, on the calling thread.
    func run() {
        for (registration, number) in removals { registration.numberRemoved(number) }
        for registration in drains { registration.drain() }
    }
}
