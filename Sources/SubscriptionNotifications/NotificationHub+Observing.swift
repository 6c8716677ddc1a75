import Dispatch
import SubscriptionCenter

extension NotificationHub {
    /// Observes the number or wildcard pattern `pattern` as an `AsyncStream` of notifications (NotificationCenter's
    /// `notifications(named:object:)`).
    ///
    /// The observer is in place when this returns: every later post that matches is in the stream, in post order.
    /// It first gets the current value of every retained number the pattern matches (in byte order of the numbers,
    /// as subd's `SUB` does). `*` matches one token, `>` one or more trailing tokens, so `>` is every number.
    ///
    /// **Buffering:** the stream holds at most `bufferLimit` notifications not read yet; a post that finds it full
    /// is not delivered to it, and not counted among the post's receivers (the oldest are kept: nothing that was
    /// counted is ever dropped). Read it from one task.
    ///
    /// **End:** cancelling the reading task, or dropping the stream, ends the observer at once. The stream finishes
    /// when its exact number is removed (subd's `GONE`) or the hub is deallocated.
    ///
    /// ```swift
    /// let changes = try hub.observe("CART.changes", from: "apple")
    /// Task {
    ///     for await note in changes { print(note.from ?? "?", note.text ?? "") }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - pattern: A number (which must exist) or a pattern with wildcards (which need not match anything yet).
    ///   - sender: Only notifications posted with this very sender (NSNotification's `object:` filter); nil: all.
    ///   - group: A queue group: of the group's observers that a post matches, one gets it, in turn.
    ///   - bufferLimit: The most notifications the stream holds unread (at least 1).
    /// - Throws: ``HubError/invalidName(_:_:)``, ``HubError/notFound(_:)`` for an exact number that does not exist,
    ///   ``HubError/invalidSender(_:_:)``, ``HubError/invalidGroup(_:_:)``, ``HubError/invalidBufferLimit(_:)``.
    public func observe(
        _ pattern: String, from sender: String? = nil, group: String? = nil,
        bufferLimit: Int = NotificationHub.defaultBufferLimit
    ) throws(HubError) -> AsyncStream<Notification> {
        try HubRules.checkBufferLimit(bufferLimit)
        let registration = Registration(.notifications(limit: bufferLimit), hub: self)
        try add(registration, to: pattern, from: sender, group: group)
        // The stream pulls from the registration's mailbox; dropping it, or cancelling its reader, ends the observer.
        let lifetime = StreamLifetime(registration)
        return AsyncStream(
            unfolding: {
                guard case .notification(let notification)? = await lifetime.registration.next() else { return nil }
                return notification
            },
            onCancel: { lifetime.registration.end() })
    }

    /// Observes the number or wildcard pattern `pattern` with a closure, until the returned token is cancelled or
    /// deallocated (NotificationCenter's `addObserver(forName:object:queue:using:)`, with no `removeObserver`).
    ///
    /// The handler gets each matching notification once, one at a time, in post order; first the current value of
    /// every retained number the pattern matches (as ``observe(_:from:group:bufferLimit:)``). With no `queue` it
    /// runs on the posting thread that found it idle (usually the post's own, before `post` returns), outside the
    /// hub's lock, so it may post, observe or cancel tokens; with a queue it runs there, still one at a time. What
    /// waits for a handler is not bounded. After ``ObservationToken/cancel()`` returns, or the token is deallocated,
    /// the handler is not started again (a call already running on another thread finishes).
    ///
    /// ```swift
    /// final class Tally: Sendable { let total = Mutex(0) }  // a Mutex is not copyable: a closure cannot capture one
    /// let tally = Tally()
    /// let token = try hub.addObserver(for: "CART.changes") { note in
    ///     tally.total.withLock { $0 += note.text == "plus" ? 1 : -1 }
    /// }
    /// // keep `token` for as long as the observer should stay
    /// ```
    ///
    /// - Parameters:
    ///   - pattern: A number (which must exist) or a pattern with wildcards.
    ///   - sender: Only notifications posted with this very sender; nil: all.
    ///   - group: A queue group: of the group's observers that a post matches, one gets it, in turn.
    ///   - queue: Where the handlers run; nil: on a posting thread.
    ///   - handler: Called with each notification.
    ///   - whenRemoved: Called, after the notifications before it, when the exact number observed is removed; the
    ///     observer has ended then.
    /// - Returns: The token that keeps the observer in place: cancel it, or let it go, to end the observer.
    /// - Throws: as ``observe(_:from:group:bufferLimit:)``.
    public func addObserver(
        for pattern: String, from sender: String? = nil, group: String? = nil, queue: DispatchQueue? = nil,
        using handler: @escaping @Sendable (Notification) -> Void,
        whenRemoved: (@Sendable (String) -> Void)? = nil
    ) throws(HubError) -> ObservationToken {
        let registration = Registration(
            .handler(Registration.Handler(queue: queue, call: handler, removed: whenRemoved, observer: nil)), hub: self)
        try add(registration, to: pattern, from: sender, group: group)
        return ObservationToken(registration)
    }

    /// Observes the number or wildcard pattern `pattern` for `observer`, held **weakly**: the observation ends when
    /// the observer is deallocated (NotificationCenter's `addObserver(_:selector:name:object:)`), with no token and
    /// no `removeObserver`.
    ///
    /// The handler gets the observer (so it need not capture it: capturing it strongly would keep it alive for
    /// ever) and each notification, as ``addObserver(for:from:group:queue:using:whenRemoved:)`` describes. Once the
    /// observer is deallocated, the handler is not called again and no count includes it.
    ///
    /// ```swift
    /// final class Controller: Sendable {
    ///     let total = Mutex(0)
    ///     init(hub: NotificationHub) throws {
    ///         try hub.addObserver(self, for: "CART.changes") { controller, note in
    ///             controller.total.withLock { $0 += note.text == "plus" ? 1 : -1 }
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Throws: as ``observe(_:from:group:bufferLimit:)``.
    public func addObserver<Observer: AnyObject & Sendable>(
        _ observer: Observer, for pattern: String, from sender: String? = nil, group: String? = nil,
        queue: DispatchQueue? = nil,
        using handler: @escaping @Sendable (Observer, Notification) -> Void,
        whenRemoved: (@Sendable (Observer, String) -> Void)? = nil
    ) throws(HubError) {
        let removed: (@Sendable (String) -> Void)?
        if let whenRemoved {
            removed = { [weak observer] number in
                if let observer { whenRemoved(observer, number) }
            }
        } else {
            removed = nil
        }
        let weakHandler = Registration.Handler(
            queue: queue,
            call: { [weak observer] notification in
                if let observer { handler(observer, notification) }
            },
            removed: removed,
            observer: { [weak observer] in observer })
        try add(Registration(.handler(weakHandler), hub: self), to: pattern, from: sender, group: group)
    }

    /// Checks the arguments and puts the registration in place; its first deliveries (current values) are run
    /// before this returns.
    private func add(
        _ registration: Registration, to pattern: String, from sender: String?, group: String?
    ) throws(HubError) {
        try HubRules.checkPattern(pattern)
        try HubRules.checkSender(sender)
        try HubRules.checkGroup(group)
        try locked { state throws(HubError) in
            do throws(CenterError) {
                try state.add(registration, to: pattern, from: sender, group: group)
            } catch {
                throw HubError(error)
            }
        }
    }
}
