/// The messages (and `GONE` events) received for the patterns of one
/// ``SubscriptionClient/subscribe(_:from:group:)`` call, in the order the server sent them.
///
/// The sequence ends without an error when every pattern is gone (each was an exact number that was removed),
/// or when ``SubscriptionClient/close()`` is called. It throws ``ClientError/connectionLost`` (or
/// ``ClientError/protocolViolation(_:)``) when the connection ends otherwise. Iterate it once, from one task.
/// Cancelling the iterating task ends it, and ending it (or dropping every copy of it) sends `UNSUB` for the
/// patterns that no other subscription of the client holds. Messages wait in memory until they are read.
public struct Subscription: AsyncSequence, Sendable {
    /// One thing a subscription receives.
    public enum Event: Sendable, Equatable {
        /// A message published to a number that one of the patterns matches.
        case message(ReceivedMessage)
        /// The number was removed (a `GONE` push); the exact pattern for it is no longer in force.
        case gone(String)
    }

    public typealias Element = Event
    public typealias Failure = ClientError

    /// The patterns as they were subscribed.
    public let patterns: [String]
    /// The publisher name the subscription is limited to (`SUB ... from=`), if any.
    public let from: String?
    /// The queue group the subscription belongs to (`SUB ... group=`), if any.
    public let group: String?
    private let events: AsyncThrowingStream<Event, any Error>
    /// Keeps the client (and its connection) alive while the subscription is in use.
    private let client: SubscriptionClient

    /// What the iterator reports taken messages to, so the connection reads again once the consumer caught up.
    struct Flow: Sendable {
        let backlog: Backlog
        let connection: Connection

        /// Counts a message as taken by the consumer.
        func taken(_ event: Event?) {
            guard case .message(let message)? = event else { return }
            if backlog.remove(Backlog.weight(of: message)) { connection.consumerCaughtUp() }
        }
    }

    private let flow: Flow

    init(
        patterns: [String], from: String?, group: String?, events: AsyncThrowingStream<Event, any Error>,
        client: SubscriptionClient, flow: Flow
    ) {
        self.patterns = patterns
        self.from = from
        self.group = group
        self.events = events
        self.client = client
        self.flow = flow
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: events.makeAsyncIterator(), client: client, flow: flow)
    }

    /// Reads the events of a ``Subscription``.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private var base: AsyncThrowingStream<Event, any Error>.AsyncIterator
        private let client: SubscriptionClient
        private let flow: Flow

        init(base: AsyncThrowingStream<Event, any Error>.AsyncIterator, client: SubscriptionClient, flow: Flow) {
            self.base = base
            self.client = client
            self.flow = flow
        }

        /// The next event, or nil when the subscription has ended.
        public mutating func next() async throws(ClientError) -> Event? {
            do {
                let event = try await base.next()
                flow.taken(event)
                return event
            } catch {
                throw Self.clientError(error)
            }
        }

        /// The next event, or nil when the subscription has ended; runs on the caller's actor.
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(ClientError) -> Event? {
            do {
                let event = try await base.next(isolation: actor)
                flow.taken(event)
                return event
            } catch {
                throw Self.clientError(error)
            }
        }

        private static func clientError(_ error: any Error) -> ClientError {
            (error as? ClientError) ?? .connectionLost
        }
    }
}
