/// One observation of a ``ReconnectingClient`` (an ``Observation`` or a ``Watch``): what to subscribe to on every new
/// connection, and the subscription made on the newest one, waiting for its reader to take it over.
///
/// The client offers a subscription after each (re)connection; the reader takes it once the previous connection's
/// subscription has ended (after the messages it still held), so the reader sees every connection's messages in
/// order, and never two connections' at once.
final class ObservationEntry: Sendable {
    /// What to subscribe.
    enum Kind: Sendable, Equatable {
        /// `SUB <pattern> [from=] [group=]`, for ``ReconnectingClient/observe(_:from:group:)``.
        case messages(from: String?, group: String?)
        /// `SUB <number>` and a `GET` that checks it is retained, for ``ReconnectingClient/watch(_:)``.
        case retained
    }

    /// What the reader gets next.
    enum Handover: Sendable {
        /// The subscription made on connection `generation`.
        case subscription(generation: Int, Subscription)
        /// The observation is over: the client was closed (nil), or subscribing again was refused (the error).
        case ended(ClientError?)
    }

    private struct State {
        /// The connection of the newest subscription offered.
        var generation = 0
        /// The subscriptions offered and not taken yet, oldest first (the reader may still be reading an older one:
        /// each keeps the messages it received until they are read).
        var waiting: [(generation: Int, subscription: Subscription)] = []
        /// The reader, while it waits.
        var reader: CheckedContinuation<Handover, Never>?
        /// Set once the observation is over.
        var ended = false
        var error: ClientError?
    }

    /// Its key in the client's table.
    let id: Int
    /// The pattern (or, for ``Kind/retained``, the number).
    let pattern: String
    let kind: Kind
    private let state = Guarded(State())

    init(id: Int, pattern: String, kind: Kind) {
        self.id = id
        self.pattern = pattern
        self.kind = kind
    }

    /// The subscription made on connection `generation`, for the reader, after those offered before it. One from an
    /// older connection than the newest offered is dropped (which ends it).
    func offer(_ subscription: Subscription, generation: Int) {
        let reader = state.withLock { state -> CheckedContinuation<Handover, Never>? in
            guard !state.ended, generation > state.generation else { return nil }
            state.generation = generation
            guard let reader = state.reader else {
                state.waiting.append((generation, subscription))
                return nil
            }
            state.reader = nil
            return reader
        }
        reader?.resume(returning: .subscription(generation: generation, subscription))
    }

    /// Ends the observation: the reader gets `error` (nil: the plain end) once the messages it holds are read.
    func end(_ error: ClientError?) {
        let (reader, dropped) = state.withLock { state -> (CheckedContinuation<Handover, Never>?, [Subscription]) in
            guard !state.ended else { return (nil, []) }
            state.ended = true
            state.error = error
            defer {
                state.reader = nil
                state.waiting = []
            }
            return (state.reader, state.waiting.map(\.subscription))
        }
        _ = dropped  // released here, outside the lock: that ends it (UNSUB)
        reader?.resume(returning: .ended(error))
    }

    /// Waits for the next subscription from a newer connection than `generation`, or the end. Cancelling the waiting
    /// task ends the observation.
    func next(after generation: Int) async -> Handover {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Handover, Never>) in
                let now = state.withLock { state -> Handover? in
                    if state.ended { return .ended(state.error) }
                    state.waiting.removeAll { $0.generation <= generation }
                    if !state.waiting.isEmpty {
                        let (newer, subscription) = state.waiting.removeFirst()
                        return .subscription(generation: newer, subscription)
                    }
                    state.reader = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            end(nil)
        }
    }
}

/// The events of one observation over every connection of a ``ReconnectingClient``: those of each connection's
/// subscription in turn. Keeps the client alive while in use; when it ends, or the last copy goes, the client forgets
/// the observation (no more subscribing again) and the current subscription ends (`UNSUB`).
struct ResumingEvents: Sendable {
    let entry: ObservationEntry
    let lifetime: ObservationLifetime

    func makeIterator() -> Iterator {
        Iterator(entry: entry, lifetime: lifetime)
    }

    /// Reads the events, taking each connection's subscription over when the previous one ended.
    struct Iterator {
        let entry: ObservationEntry
        let lifetime: ObservationLifetime
        private var base: Subscription.AsyncIterator?
        private var generation = 0

        init(entry: ObservationEntry, lifetime: ObservationLifetime) {
            self.entry = entry
            self.lifetime = lifetime
        }

        /// The next event, or nil when the observation has ended.
        mutating func next(isolation actor: isolated (any Actor)?) async throws(ClientError) -> Subscription.Event? {
            while true {
                if base == nil {
                    switch await entry.next(after: generation) {
                    case .subscription(let newer, let subscription):
                        generation = newer
                        base = subscription.makeAsyncIterator()
                    case .ended(let error):
                        lifetime.end()
                        if let error { throw error }
                        return nil
                    }
                }
                do {
                    if let event = try await base!.next(isolation: actor) { return event }
                    // Every pattern gone, the client closed, or the reading task cancelled.
                    lifetime.end()
                    return nil
                } catch {
                    // That connection ended; the next one brings a new subscription (or the observation's end).
                    base = nil
                }
            }
        }
    }
}

/// Ends an observation when its last user goes: the client then forgets it. Holds the client, so that a client whose
/// observations are in use stays connected.
final class ObservationLifetime: Sendable {
    private let owner: ReconnectingClient
    private let id: Int

    init(owner: ReconnectingClient, id: Int) {
        self.owner = owner
        self.id = id
    }

    deinit {
        owner.forget(id)
    }

    /// The observation ended: forget it now.
    func end() {
        owner.forget(id)
    }
}
