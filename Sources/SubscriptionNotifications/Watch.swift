extension NotificationHub {
    /// The changes of one retained number (``NotificationHub/watch(_:bufferLimit:)``): first its current value
    /// (``Change/isInitial``), when it has one, then one ``Change`` per post, each with the old and the new value.
    ///
    /// The values wait in a buffer of at most the watch's buffer limit; when the watcher falls further behind, the
    /// **oldest** waiting values are dropped, so the latest value always arrives, and the next change reports what
    /// was skipped (``Change/missed``) with the last value this watch did report as ``Change/old``.
    ///
    /// The sequence ends when the number is removed or the hub is deallocated. Cancelling the iterating task, or
    /// dropping the watch, ends the observation (the hub no longer counts it). Iterate it once, from one task.
    ///
    /// ```swift
    /// let counts = try hub.watch("CART.count")
    /// Task {
    ///     for await change in counts {
    ///         print("count:", change.old?.text ?? "(none)", "->", change.new.text ?? "")
    ///     }
    /// }
    /// ```
    public struct Watch: AsyncSequence, Sendable {
        public typealias Element = Change
        public typealias Failure = Never

        /// The watched number.
        public let number: String
        /// The number's revision when the watch began (0 when nothing was posted to it yet).
        public let startRevision: Int
        private let values: AsyncStream<RetainedValue>

        init(number: String, startRevision: Int, values: AsyncStream<RetainedValue>) {
            self.number = number
            self.startRevision = startRevision
            self.values = values
        }

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(base: values.makeAsyncIterator(), startRevision: startRevision)
        }

        /// Reads the changes of a ``Watch``, pairing each value with the one it reported before.
        public struct AsyncIterator: AsyncIteratorProtocol {
            private var base: AsyncStream<RetainedValue>.AsyncIterator
            private var state: WatchState

            init(base: AsyncStream<RetainedValue>.AsyncIterator, startRevision: Int) {
                self.base = base
                self.state = WatchState(startRevision: startRevision)
            }

            /// The next change, or nil when the watch has ended.
            public mutating func next() async -> Change? {
                guard let value = await base.next() else { return nil }
                return state.change(to: value)
            }

            /// The next change, or nil when the watch has ended; runs on the caller's actor.
            public mutating func next(isolation actor: isolated (any Actor)?) async -> Change? {
                guard let value = await base.next(isolation: actor) else { return nil }
                return state.change(to: value)
            }
        }
    }
}

/// What a ``NotificationHub/Watch`` reported last: a plain value whose ``change(to:)`` turns each value that arrives
/// into the change to report. The hub's revisions only go up within one watch (removing the number ends it).
struct WatchState: Sendable, Equatable {
    /// The revision the number had when the watch began; the value with this revision is the initial one.
    let startRevision: Int
    /// The value reported last; nil before the first.
    private(set) var last: NotificationHub.RetainedValue?

    init(startRevision: Int) {
        self.startRevision = startRevision
    }

    mutating func change(to value: NotificationHub.RetainedValue) -> NotificationHub.Change {
        let after = last?.revision ?? startRevision
        let isInitial = last == nil && value.revision == startRevision
        let missed = isInitial ? 0 : max(0, value.revision - after - 1)
        let change = NotificationHub.Change(old: last, new: value, isInitial: isInitial, missed: missed)
        last = value
        return change
    }
}
