extension NotificationHub {
    /// Watches the retained number `number`, as KVO with `[.initial, .old, .new]`: first its current value, when
    /// it has one, then each change, with the value before and the value after (see ``Watch`` and ``Change``).
    ///
    /// The watch is in place when this returns. It holds at most `bufferLimit` values not read yet; when it falls
    /// further behind, its oldest values are dropped (the latest always arrives, and ``Change/missed`` says what
    /// was skipped). It ends when the number is removed; cancelling its task or dropping it ends the observer.
    ///
    /// ```swift
    /// try hub.create("CART.count", retained: true)
    /// let counts = try hub.watch("CART.count")
    /// Task {
    ///     for await change in counts {
    ///         print("count:", change.old?.text ?? "(none)", "->", change.new.text ?? "")
    ///     }
    /// }
    /// ```
    ///
    /// - Throws: ``HubError/invalidName(_:_:)``, ``HubError/notFound(_:)``, ``HubError/notRetained(_:)`` for a plain
    ///   number, ``HubError/invalidBufferLimit(_:)``.
    public func watch(_ number: String, bufferLimit: Int = NotificationHub.defaultBufferLimit) throws(HubError) -> Watch
    {
        try HubRules.checkNumber(number)
        try HubRules.checkBufferLimit(bufferLimit)
        let registration = Registration(.values(limit: bufferLimit), hub: self)
        let start = try locked { state throws(HubError) in try state.addWatch(registration, to: number) }
        let lifetime = StreamLifetime(registration)
        let values = AsyncStream<RetainedValue>(
            unfolding: {
                guard case .notification(let notification)? = await lifetime.registration.next() else { return nil }
                return RetainedValue(notification)
            },
            onCancel: { lifetime.registration.end() })
        return Watch(number: number, startRevision: start, values: values)
    }
}
