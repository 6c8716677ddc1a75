extension NotificationHub {
    /// One change of a retained number's value, as KVO reports it with `[.initial, .old, .new]`: the value before
    /// (``old``), the value now (``new``), and whether this is the value the number had when the watch began
    /// (``isInitial``).
    ///
    /// ``old`` is always the value this watch reported last (nil for its first change), so a watcher that follows
    /// the changes one by one never sees a value it was not told. When the watcher fell more than its buffer behind,
    /// the oldest changes were skipped; ``missed`` says how many revisions it did not see between ``old`` and
    /// ``new``.
    ///
    /// ```swift
    /// for await change in try hub.watch("CART.count") {
    ///     print(change.old?.text ?? "(none)", "->", change.new.text ?? "")
    /// }
    /// ```
    public struct Change: Sendable, Equatable {
        /// The value before this change: the one this watch reported last; nil for its first change.
        public var old: RetainedValue?
        /// The value now.
        public var new: RetainedValue
        /// True for the value the number had when the watch began (KVO's `.initial`), reported first.
        public var isInitial: Bool
        /// How many revisions came between ``old`` (or the start of the watch) and ``new`` that this watch skipped,
        /// because it was more than its buffer limit behind; 0 when it saw every change.
        public var missed: Int

        /// Makes a change (for tests; a ``Watch`` makes the ones it reports).
        public init(old: RetainedValue?, new: RetainedValue, isInitial: Bool = false, missed: Int = 0) {
            self.old = old
            self.new = new
            self.isInitial = isInitial
            self.missed = missed
        }

        /// The number.
        public var number: String { new.number }
        /// The new value's revision.
        public var revision: Int { new.revision }
        /// The new value's sender, when the poster gave one.
        public var from: String? { new.from }
    }
}
