/// The messages of a number or wildcard pattern observed with ``ReconnectingClient/observe(_:from:group:)``, across
/// every connection of the client: NotificationHub's `observe` stream, over the network.
///
/// After a reconnection the pattern is subscribed again on the new connection before any command made meanwhile is
/// sent, and the messages go on in the same sequence. Messages published while no connection was up are not
/// received (subd delivers to the sessions subscribed at the time). No message is delivered twice: the current value
/// of a retained number, pushed again when the pattern is subscribed again, is passed over when it is the value this
/// sequence delivered last (same revision, same value).
///
/// The sequence ends when its exact number is removed (`GONE`), when ``ReconnectingClient/close()`` is called, or
/// when the reading task is cancelled; it throws when subscribing again after a reconnection is refused (e.g.
/// ``ClientError/notFound(_:)`` from a server that does not have the number). Iterate it once, from one task.
/// Dropping it, or ending it, unsubscribes.
///
/// ```swift
/// let orders = try await client.observe("ORDERS.>")
/// for try await message in orders {
///     print(message.number, message.text ?? "")
/// }
/// ```
public struct Observation: AsyncSequence, Sendable {
    public typealias Element = ReceivedMessage
    public typealias Failure = ClientError

    /// The pattern observed.
    public let pattern: String
    private let events: ResumingEvents

    init(pattern: String, events: ResumingEvents) {
        self.pattern = pattern
        self.events = events
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: events.makeIterator())
    }

    /// Reads the messages of an ``Observation``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var base: ResumingEvents.Iterator
        private var repeats = RetainedRepeats()

        init(base: ResumingEvents.Iterator) {
            self.base = base
        }

        /// The next message, or nil when the observation has ended.
        public mutating func next() async throws(ClientError) -> ReceivedMessage? {
            try await next(isolation: nil)
        }

        /// The next message, or nil when the observation has ended; runs on the caller's actor.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(ClientError) -> ReceivedMessage?
        {
            while let event = try await base.next(isolation: actor) {
                guard case .message(let message) = event, !repeats.isRepeat(message) else { continue }
                return message
            }
            return nil
        }
    }
}

/// The value of each retained number an ``Observation`` delivered last, so that the same value pushed again (on
/// subscribing again after a reconnection) is not delivered twice. A plain value.
struct RetainedRepeats: Sendable {
    private var last: [String: RetainedValue] = [:]

    /// True when `message` is a retained number's value delivered already (the same revision and value as the last
    /// one of its number); otherwise it becomes that number's last value.
    mutating func isRepeat(_ message: ReceivedMessage) -> Bool {
        guard let value = RetainedValue(message) else { return false }
        if last[value.number] == value { return true }
        last[value.number] = value
        return false
    }
}
