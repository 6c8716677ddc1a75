/// Observing and watching with a ``ReconnectingClient``: NotificationHub's `observe` and `watch`, over the network,
/// going on across reconnections.
extension ReconnectingClient {
    /// Observes the number or wildcard pattern `pattern`: an ``Observation``, the `AsyncSequence` of its messages,
    /// from this connection and every later one.
    ///
    /// When connected, it returns once subscribed (a refusal is thrown); while disconnected, it returns at once and
    /// subscribes on the next connection (a refusal then ends the sequence with the error).
    ///
    /// ```swift
    /// let changes = try await client.observe("CART.>", from: "apple")
    /// Task {
    ///     for try await note in changes { print(note.number, note.from ?? "-", note.text ?? "") }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - pattern: A number (which must exist) or a pattern with wildcards (`*` one token, `>` the rest).
    ///   - sender: Only messages posted by the client of this name; nil: all.
    ///   - group: A queue group: of the group's subscribers, one gets each message, in turn.
    /// - Throws: ``ClientError/notFound(_:)`` for an exact number that does not exist, ``ClientError/denied(_:)``
    ///   for a pattern the user may not subscribe to, a name error (nothing sent),
    ///   ``ClientError/timeout(verb:after:)``.
    public func observe(_ pattern: String, from sender: String? = nil, group: String? = nil) async throws(ClientError)
        -> Observation
    {
        _ = try Command.sub(pattern, from: sender, group: group)
        let events = try await start(pattern, .messages(from: sender, group: group))
        return Observation(pattern: pattern, events: events)
    }

    /// Watches the retained number `number`: its current value first (when it has one), then each change with the old
    /// and the new value, across reconnections (see ``Watch``). A change whose revision does not follow the one before
    /// (revisions published while the client was away) carries a ``Watch/Gap``; a value pushed again on subscribing
    /// again, which the watch has already, is not reported twice.
    ///
    /// ```swift
    /// for try await change in try await client.watch("CART.count") {
    ///     if case .missed(let revisions)? = change.gap { print("missed revisions", revisions) }
    ///     print(change.old?.text ?? "(none)", "->", change.new.text ?? "")
    /// }
    /// ```
    ///
    /// - Throws: ``ClientError/notFound(_:)``, ``ClientError/proto(_:)`` for a plain number, and as
    ///   ``observe(_:from:group:)``.
    public func watch(_ number: String) async throws(ClientError) -> Watch {
        _ = try Command.get(number)
        let events = try await start(number, .retained)
        return Watch(number: number, source: .resuming(events), start: WatchState(after: nil))
    }

    /// Registers the observation (so every later connection subscribes it) and, when connected, subscribes it now.
    private func start(_ pattern: String, _ kind: ObservationEntry.Kind) async throws(ClientError) -> ResumingEvents {
        let registered = state.withLock { state -> (ObservationEntry, (SubscriptionClient, Int)?)? in
            let entry: ObservationEntry
            switch state.phase {
            case .closed:
                return nil
            case .connecting:
                entry = ObservationEntry(id: state.makeID(), pattern: pattern, kind: kind)
                state.observations[entry.id] = entry
                return (entry, nil)
            case .connected(let client, let generation):
                entry = ObservationEntry(id: state.makeID(), pattern: pattern, kind: kind)
                state.observations[entry.id] = entry
                return (entry, (client, generation))
            }
        }
        guard let (entry, current) = registered else { throw .connectionLost }
        let events = ResumingEvents(entry: entry, lifetime: ObservationLifetime(owner: self, id: entry.id))
        guard let (client, generation) = current else { return events }
        do throws(ClientError) {
            entry.offer(try await subscribe(entry, on: client), generation: generation)
        } catch {
            // A lost connection: the next one subscribes it. Anything else is the caller's to know.
            guard case .connectionLost = error else {
                forget(entry.id)
                throw error
            }
        }
        return events
    }
}
