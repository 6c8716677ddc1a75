import Dispatch

/// One observer's end of a ``NotificationHub``: what kind of observer it is and its ``Mailbox``. Shared by the
/// hub's center (through its ``Subscriber``), the observer's token or stream, and the threads that run it, so it is
/// `Sendable`: every stored property is a `let` of a Sendable type, and the mailbox is behind its own lock.
///
/// **Locks.** The hub's lock, then a mailbox's: a mailbox's lock is never held while taking the hub's. Under either,
/// nothing is resumed and no observer code runs: a stream's waiting reader is resumed only once the hub's lock is
/// dropped (resuming a task takes that task's own lock, which a thread cancelling it holds while it runs the
/// stream's end, and that end takes the hub's lock).
final class Registration: Sendable {
    /// What kind of observer, and how its mailbox is bounded.
    enum Kind: Sendable {
        /// ``NotificationHub/observe(_:from:group:bufferLimit:)``: at most `limit` waiting; a post that finds it
        /// full is not taken (and not counted), so nothing counted is ever dropped.
        case notifications(limit: Int)
        /// ``NotificationHub/watch(_:bufferLimit:)``: at most `limit` waiting; a full mailbox drops its oldest, so
        /// the latest value always arrives.
        case values(limit: Int)
        /// ``NotificationHub/addObserver(for:from:group:queue:using:whenRemoved:)`` and its weak form: unbounded,
        /// run by one thread at a time.
        case handler(Handler)
    }

    /// A closure observer.
    struct Handler: Sendable {
        /// Where it runs; nil: on the posting thread that found it idle.
        let queue: DispatchQueue?
        /// Calls the observer's code (the weak form looks its observer up again first, and skips it if it is gone).
        let call: @Sendable (NotificationHub.Notification) -> Void
        /// Tells the observer its exact number was removed.
        let removed: (@Sendable (String) -> Void)?
        /// The weak form: the observer, retained for as long as the caller keeps the result, or nil once it was
        /// deallocated. Nil for a token observer.
        let observer: (@Sendable () -> (any Sendable)?)?
    }

    /// What handing one item over came to.
    enum Delivery {
        /// In the mailbox (someone will take it).
        case received
        /// In the mailbox of an idle handler: the caller must have it run once the hub's lock is dropped.
        case receivedRunNeeded
        /// For the stream's waiting reader: the caller must resume it with the item once the hub's lock is dropped.
        case receivedWake(CheckedContinuation<Mailbox.Item?, Never>)
        /// Not taken: the stream's mailbox is full, or the observer ended.
        case notReceived
        /// The weak observer was deallocated: the registration must go.
        case observerGone
    }

    let kind: Kind
    /// The hub, to leave it when the observer ends; weak, so that observers never keep a hub alive.
    weak let hub: NotificationHub?
    private let mailbox = HubLock(Mailbox())

    init(_ kind: Kind, hub: NotificationHub) {
        self.kind = kind
        self.hub = hub
    }

    /// The handler, for a closure observer.
    var handler: Handler? {
        if case .handler(let handler) = kind { return handler }
        return nil
    }

    /// True for the weak form (its observer must be looked up to know whether it is still there).
    var isWeak: Bool { handler?.observer != nil }

    /// Whether the weak form's observer is still there; it is appended to `keepAlive`, which the caller drops only
    /// after the hub's lock, so that an observer's `deinit` never runs under it. Always true for other kinds.
    func observerIsAlive(keepAlive: inout [any Sendable]) -> Bool {
        guard let observer = handler?.observer else { return true }
        guard let alive = observer() else { return false }
        keepAlive.append(alive)
        return true
    }

    /// Hands one item to the observer, under the hub's lock, in post order. Runs none of the observer's code and
    /// resumes nothing: the caller does what the result says once the hub's lock is dropped.
    func deliver(_ item: Mailbox.Item, keepAlive: inout [any Sendable]) -> Delivery {
        guard observerIsAlive(keepAlive: &keepAlive) else { return .observerGone }
        let kind = self.kind
        return mailbox.withLock { box in
            guard !box.cancelled, !box.finished else { return .notReceived }
            switch kind {
            case .handler:
                box.items.append(item)
                if box.draining { return .received }
                box.draining = true
                return .receivedRunNeeded
            case .notifications(let limit):
                if !item.isLast && box.items.count >= limit { return .notReceived }
            case .values(let limit):
                if !item.isLast && box.items.count >= limit { _ = box.items.popFirst() }
            }
            if let reader = box.reader {
                box.reader = nil
                return .receivedWake(reader)
            }
            box.items.append(item)
            return .received
        }
    }

    /// A stream's next item, waiting for one; nil once the observer ended or its last item was taken. For one
    /// reader at a time (a stream is iterated by one task).
    func next() async -> Mailbox.Item? {
        let item: Mailbox.Item? = await withCheckedContinuation { continuation in
            let ready: Mailbox.Item?? = mailbox.withLock { box in
                if box.cancelled || box.finished { return .some(nil) }
                if let item = box.items.popFirst() { return .some(item) }
                precondition(box.reader == nil, "a hub stream is read by one task at a time")
                box.reader = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
        if let item, item.isLast { mailbox.withLock { $0.finished = true } }
        return item
    }

    /// Runs a handler's mailbox until it is empty, on the calling thread, with no lock held. Only the thread whose
    /// delivery found the handler idle runs it, so the handler sees one item at a time, in post order; what is posted
    /// meanwhile (even from inside the handler) is run next, by the same thread.
    func run() {
        guard let handler else { return }
        while true {
            let item: Mailbox.Item? = mailbox.withLock { box in
                guard !box.cancelled, let item = box.items.popFirst() else {
                    box.items.removeAll()
                    box.draining = false
                    return nil
                }
                return item
            }
            guard let item else { return }
            switch item {
            case .notification(let notification): handler.call(notification)
            case .removed(let number): handler.removed?(number)
            case .hubEnded: break
            }
        }
    }

    /// Ends the registration: nothing more is taken or started, a waiting reader gets nil, and it leaves the hub.
    /// Called by its token, its stream's end and its watch's; never under the hub's lock.
    func end() {
        let reader: CheckedContinuation<Mailbox.Item?, Never>? = mailbox.withLock { box in
            box.cancelled = true
            box.items.removeAll()
            defer { box.reader = nil }
            return box.reader
        }
        reader?.resume(returning: nil)
        hub?.forget(self)
    }
}

/// Ends its registration when the stream that owns it is dropped (an `AsyncStream(unfolding:)` says nothing then).
final class StreamLifetime: Sendable {
    let registration: Registration

    init(_ registration: Registration) {
        self.registration = registration
    }

    deinit {
        registration.end()
    }
}
