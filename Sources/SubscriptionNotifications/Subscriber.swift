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

/// Where the deliveries of one call under the hub's lock go, and what they leave to do once the lock is dropped.
/// One per hub, used by one call at a time (the lock is held for the whole call), emptied by
/// ``HubState/takeWork()``.
final class Outbox {
    /// The work to hand out of the lock.
    var work = HubWork()
    /// Registrations whose weak observer was found deallocated: removed from the center after the call.
    var gone: [Registration] = []
    /// Registrations whose exact number was removed: the center dropped them; the state forgets them too.
    var removed: [Registration] = []

    /// Hands `item` to `registration`; true when it was taken (for the post's receivers count).
    @discardableResult
    func deliver(_ item: Mailbox.Item, to registration: Registration) -> Bool {
        switch registration.deliver(item, keepAlive: &work.keepAlive) {
        case .received:
            return true
        case .receivedRunNeeded:
            work.runs.append(registration)
            return true
        case .receivedWake(let reader):
            work.wakes.append((reader, item))
            return true
        case .notReceived:
            return false
        case .observerGone:
            gone.append(registration)
            return false
        }
    }

    /// Hands a post to `registration` as its notification.
    @discardableResult
    func deliver(_ posting: Posting, on number: String, group: String?, to registration: Registration) -> Bool {
        deliver(.notification(NotificationHub.Notification(posting, number: number, group: group)), to: registration)
    }

    func numberRemoved(_ number: String, for registration: Registration) {
        removed.append(registration)
        deliver(.removed(number), to: registration)
    }
}

/// What a call does after it dropped the hub's lock: resume readers, run handlers, and release what might run an
/// observer's code.
struct HubWork: Sendable {
    /// Stream readers that were waiting, with the item each is handed.
    var wakes: [(CheckedContinuation<Mailbox.Item?, Never>, Mailbox.Item)] = []
    /// Handlers this call found idle and handed something: it runs them (here, or on their queue).
    var runs: [Registration] = []
    /// Registrations that left the center during the call: released only after the lock, since a handler's closure
    /// may hold the last reference to a token (whose `deinit` takes the lock).
    var ended: [Registration] = []
    /// Weak observers looked up during the call: released only after the lock, since the last reference may be
    /// ours and an observer's `deinit` may call the hub.
    var keepAlive: [any Sendable] = []

    /// Resumes the readers, then runs the handlers: those with a queue there, the others on the calling thread.
    func run() {
        for (reader, item) in wakes { reader.resume(returning: item) }
        for registration in runs {
            if let queue = registration.handler?.queue {
                queue.async { registration.run() }
            } else {
                registration.run()
            }
        }
    }
}
