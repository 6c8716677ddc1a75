import SubscriptionWire

/// The changes of one retained number, as KVO gives them: each with the old value (nil for the first) and the new one
/// (``SubscriptionClient/watch(_:after:)``).
///
/// It is a subscription to the number: the server pushes the current value when the subscription starts (nothing
/// when nothing was published yet), then every publication, each with its revision. The watch keeps the previous
/// value to make the (old, new) pairs, and reports a revision that does not follow the previous one as a ``Gap``:
/// revisions that never arrived (the client was cut off and came back: resume with
/// ``SubscriptionClient/watch(_:after:)`` and the last value it had), or a revision that went back (the number was
/// removed and created again, or the server lost its state). A value it already has (the same revision and value,
/// e.g. pushed again on resuming) is not a change.
///
/// The sequence ends without an error when the number is removed (`GONE`) or ``SubscriptionClient/close()`` is
/// called, and throws ``ClientError/connectionLost`` when the connection ends otherwise. Iterate it once, from one
/// task; cancelling the task, or dropping the watch, ends the subscription (`UNSUB`).
public struct Watch: AsyncSequence, Sendable {
    /// One change of the number's value.
    public struct Change: Sendable, Equatable {
        /// The value before this change; nil for the first value a watch sees when it was not resumed.
        public var old: RetainedValue?
        /// The value now.
        public var new: RetainedValue
        /// Set when the revision does not follow `old`'s (or the one resumed after) by one.
        public var gap: Gap?

        /// Makes a change.
        public init(old: RetainedValue?, new: RetainedValue, gap: Gap? = nil) {
            self.old = old
            self.new = new
            self.gap = gap
        }

        /// The number.
        public var number: String { new.number }
        /// The new value's revision.
        public var revision: Int { new.revision }
        /// The new value's publisher (`from=`), if it named itself.
        public var from: String? { new.from }
        /// The new value's info pairs by key, values as sent.
        public var info: [String: String] { new.info }
        /// The new value's info pairs in the publisher's order.
        public var infoPairs: [InfoPair] { new.infoPairs }
        /// How many revisions were missed between `old` and `new` (NotificationHub's `Change.missed`): 0 when none
        /// were, or when that cannot be told (``Gap/wentBack(from:)``).
        public var missed: Int { gap?.missedCount ?? 0 }
    }

    /// How the revisions of two consecutive changes do not follow each other.
    public enum Gap: Sendable, Equatable {
        /// These revisions were published between the old value and the new one, and never received (e.g. `4...6`):
        /// the watch was resumed after a cut-off, or the server did not deliver them.
        case missed(ClosedRange<Int>)
        /// The revision went back to the new value's from `from` (or came again with another value): the number was
        /// removed and created again, or the server lost its state. How much was missed cannot be told; `old` is the
        /// value from before.
        case wentBack(from: Int)

        /// How many revisions were missed; nil when that cannot be told (``wentBack(from:)``).
        public var missedCount: Int? {
            switch self {
            case .missed(let revisions): return revisions.count
            case .wentBack: return nil
            }
        }
    }

    public typealias Element = Change
    public typealias Failure = ClientError

    /// The watched number.
    public let number: String
    private let source: Source
    private let start: WatchState

    /// Where a watch's events come from: one subscription (``SubscriptionClient``), or one per connection
    /// (``ReconnectingClient``: the watch goes on across reconnections, one ``WatchState`` for all of them).
    enum Source: Sendable {
        case single(Subscription)
        case resuming(ResumingEvents)
    }

    init(number: String, source: Source, start: WatchState) {
        self.number = number
        self.source = source
        self.start = start
    }

    public func makeAsyncIterator() -> AsyncIterator {
        switch source {
        case .single(let subscription): AsyncIterator(base: .single(subscription.makeAsyncIterator()), state: start)
        case .resuming(let events): AsyncIterator(base: .resuming(events.makeIterator()), state: start)
        }
    }

    /// Reads the changes of a ``Watch``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        enum Base {
            case single(Subscription.AsyncIterator)
            case resuming(ResumingEvents.Iterator)

            mutating func next(isolation actor: isolated (any Actor)?) async throws(ClientError)
                -> Subscription.Event?
            {
                switch self {
                case .single(var iterator):
                    defer { self = .single(iterator) }
                    return try await iterator.next(isolation: actor)
                case .resuming(var iterator):
                    defer { self = .resuming(iterator) }
                    return try await iterator.next(isolation: actor)
                }
            }
        }

        private var base: Base
        private var state: WatchState

        init(base: Base, state: WatchState) {
            self.base = base
            self.state = state
        }

        /// The next change, or nil when the watch has ended.
        public mutating func next() async throws(ClientError) -> Change? {
            try await next(isolation: nil)
        }

        /// The next change, or nil when the watch has ended; runs on the caller's actor.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(ClientError) -> Change? {
            while let event = try await base.next(isolation: actor) {
                if let change = try receive(event) { return change }
                if case .gone = event { return nil }
            }
            return nil
        }

        private mutating func receive(_ event: Subscription.Event) throws(ClientError) -> Change? {
            guard case .message(let message) = event else { return nil }
            guard let value = RetainedValue(message) else {
                throw .protocolViolation("a MSG of the retained number '\(message.number)' came without rev=")
            }
            return state.receive(value)
        }
    }
}

/// What a ``Watch`` knows of its number: the latest value and revision it has seen. A plain value whose
/// ``receive(_:)`` turns each value that arrives into the change to report, if any.
struct WatchState: Sendable, Equatable {
    /// The latest value seen (or resumed after).
    private(set) var current: RetainedValue?
    /// The latest revision seen (or resumed after); nil before the first value of a watch that was not resumed.
    private(set) var revision: Int?

    /// A watch that starts from `last` (nil: from nothing).
    init(after last: RetainedValue?) {
        current = last
        revision = last?.revision
    }

    /// A watch that starts after `revision`, whose value is not known.
    init(afterRevision revision: Int) {
        current = nil
        self.revision = revision
    }

    /// The change that `value` makes, or nil when it is the value known already.
    mutating func receive(_ value: RetainedValue) -> Watch.Change? {
        let gap: Watch.Gap?
        if let last = revision {
            if value.revision == last + 1 {
                gap = nil
            } else if value.revision > last {
                gap = .missed(last + 1...value.revision - 1)
            } else if value.revision == last && (current == nil || current == value) {
                current = value
                return nil
            } else {
                gap = .wentBack(from: last)
            }
        } else {
            gap = nil
        }
        let change = Watch.Change(old: current, new: value, gap: gap)
        current = value
        revision = value.revision
        return change
    }
}
