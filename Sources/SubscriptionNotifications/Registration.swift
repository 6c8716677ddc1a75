import Dispatch
import Synchronization

/// One observer's end of a ``NotificationHub``: where its notifications go (a stream, a watch, or a handler with its
/// queue and mailbox) and whether it was cancelled. Shared by the hub's center (through its ``Subscriber``), the
/// observer's ``ObservationToken`` and its stream's termination handler, so it is `Sendable`: every stored property is
/// a `let` of a Sendable type, and its one mutable part, the ``Mailbox``, is behind its own lock.
///
/// Lock order: the hub's lock, then a mailbox's; a mailbox's lock is never held while taking the hub's, and neither
/// is held while an observer's code runs.
final class Registration: Sendable {
    /// Where the notifications of one registration go.
    enum Target: Sendable {
        /// ``NotificationHub/observe(_:from:group:bufferLimit:)``: a stream, buffered oldest-first.
        case notifications(AsyncStream<NotificationHub.Notification>.Continuation)
        /// ``NotificationHub/watch(_:bufferLimit:)``: a retained number's values, buffered newest-first.
        case values(AsyncStream<NotificationHub.RetainedValue>.Continuation)
        /// ``NotificationHub/addObserver(for:from:group:queue:using:whenRemoved:)`` and its weak form.
        case handler(Handler)
    }

    /// A closure observer.
    struct Handler: Sendable {
        /// Where it is called; nil: on a posting thread, one notification at a time (see ``Registration/drain()``).
        let queue: DispatchQueue?
        /// Calls the observer's code (the weak form looks its observer up again first, and skips it if it is gone).
        let call: @Sendable (NotificationHub.Notification) -> Void
        /// Tells the observer its exact number was removed.
        let removed: (@Sendable (String) -> Void)?
        /// The weak form: the observer, retained for as long as the caller keeps the result, or nil once it was
        /// deallocated. Nil for a token observer.
        let observer: (@Sendable () -> (any Sendable)?)?
    }

    /// What one delivery came to, for the post's receivers count.
    enum Delivery {
        /// Enqueued (in a stream, on a queue, or in a mailbox someone is draining already).
        case received
        /// Put in the mailbox of an idle handler: the caller must ``drain()`` it once it dropped the hub's lock.
        case receivedDrainNeeded
        /// Not taken: the stream's buffer is full, or the observer ended.
        case notReceived
        /// The weak observer was deallocated: the registration must go.
        case observerGone
    }

    let target: Target
    /// The hub, to leave it when the observer ends; weak, so that observers never keep a hub alive.
    weak let hub: NotificationHub?
    private let mailbox = Mutex(Mailbox())

    init(_ target: Target, hub: NotificationHub) {
        self.target = target
        self.hub = hub
    }

    /// True for the weak form (its observer must be looked up to know whether it is still there).
    var isWeak: Bool {
        if case .handler(let handler) = target { return handler.observer != nil }
        return false
    }

    /// False once the observer ended it (its token, its stream's end); its handler is then not started again.
    var isCancelled: Bool {
        mailbox.withLock { $0.cancelled }
    }

    /// Whether the weak form's observer is still there; it is appended to `keepAlive`, which the caller drops only
    /// after the hub's lock, so that an observer's `deinit` never runs under it. Always true for other forms.
    func observerIsAlive(keepAlive: inout [any Sendable]) -> Bool {
        guard case .handler(let handler) = target, let observer = handler.observer else { return true }
        guard let alive = observer() else { return false }
        keepAlive.append(alive)
        return true
    }

    /// Hands one post to the observer. Called under the hub's lock, in post order, so each observer gets its
    /// notifications in the order they were posted; runs none of the observer's code.
    func deliver(
        _ posting: Posting, on number: String, group: String?, keepAlive: inout [any Sendable]
    ) -> Delivery {
        switch target {
        case .notifications(let continuation):
            switch continuation.yield(NotificationHub.Notification(posting, number: number, group: group)) {
            case .enqueued: return .received
            case .dropped, .terminated: return .notReceived
            @unknown default: return .notReceived
            }
        case .values(let continuation):
            guard let value = NotificationHub.RetainedValue(posting, number: number) else { return .notReceived }
            // Newest-first: a full buffer drops its oldest value and takes this one.
            if case .terminated = continuation.yield(value) { return .notReceived }
            return .received
        case .handler(let handler):
            guard observerIsAlive(keepAlive: &keepAlive) else { return .observerGone }
            let notification = NotificationHub.Notification(posting, number: number, group: group)
            if let queue = handler.queue {
                guard !isCancelled else { return .notReceived }
                queue.async { [self] in
                    if !isCancelled { handler.call(notification) }
                }
                return .received
            }
            switch enqueue(.notification(notification)) {
            case nil: return .notReceived
            case let drainNeeded?: return drainNeeded ? .receivedDrainNeeded : .received
            }
        }
    }

    /// Tells the observer its exact number was removed: a stream or watch ends (after what it holds), a handler gets
    /// `whenRemoved` after the notifications before it. Called with no lock held.
    func numberRemoved(_ number: String) {
        switch target {
        case .notifications(let continuation): continuation.finish()
        case .values(let continuation): continuation.finish()
        case .handler(let handler):
            if let queue = handler.queue {
                guard let removed = handler.removed else { return }
                queue.async { [self] in
                    if !isCancelled { removed(number) }
                }
            } else if enqueue(.removed(number)) == true {
                drain()
            }
        }
    }

    /// The hub is being deallocated: a stream or watch ends (a handler simply gets nothing more).
    func hubEnded() {
        switch target {
        case .notifications(let continuation): continuation.finish()
        case .values(let continuation): continuation.finish()
        case .handler: break
        }
    }

    /// Ends the registration: its handler is not started again, and it leaves the hub. Called by its token, its
    /// stream's termination handler and its watch's; never under the hub's lock.
    func end() {
        mailbox.withLock { box in
            box.cancelled = true
            box.items.removeAll()
        }
        hub?.forget(self)
    }

    /// Puts an item in the mailbox of a handler with no queue. Returns nil when the registration is cancelled,
    /// else whether the caller must drain it (nobody is draining it yet).
    private func enqueue(_ item: Mailbox.Item) -> Bool? {
        mailbox.withLock { box in
            guard !box.cancelled else { return nil }
            box.items.append(item)
            if box.draining { return false }
            box.draining = true
            return true
        }
    }

    /// Runs the mailbox of a handler with no queue until it is empty, on the calling thread, with no lock held.
    /// Only one thread drains a mailbox at a time (the one whose ``enqueue(_:)`` found it idle), so the handler sees
    /// one notification at a time, in post order; a post made from inside the handler is run after it returns.
    func drain() {
        guard case .handler(let handler) = target else { return }
        while true {
            let batch: [Mailbox.Item]? = mailbox.withLock { box in
                if box.cancelled || box.items.isEmpty {
                    box.items.removeAll()
                    box.draining = false
                    return nil
                }
                var batch: [Mailbox.Item] = []
                swap(&batch, &box.items)
                return batch
            }
            guard let batch else { return }
            for item in batch {
                if isCancelled { break }
                switch item {
                case .notification(let notification): handler.call(notification)
                case .removed(let number): handler.removed?(number)
                }
            }
        }
    }
}

/// What a handler with no queue has waiting, and whether a thread is running it.
struct Mailbox: Sendable {
    /// One thing a handler is told.
    enum Item: Sendable {
        case notification(NotificationHub.Notification)
        case removed(String)
    }

    /// Waiting, in post order.
    var items: [Item] = []
    /// True while a thread runs the handler (it takes what comes in meanwhile, in order).
    var draining = false
    /// True once the observer ended; nothing more is taken or started.
    var cancelled = false
}
