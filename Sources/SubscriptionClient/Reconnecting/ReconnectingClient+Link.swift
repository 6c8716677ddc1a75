/// Keeping the link: connecting, setting a new connection up (observations subscribed again, held commands sent), and
/// reconnecting after a loss.
extension ReconnectingClient {
    /// How setting up a connection ended.
    enum Installed {
        /// It is the connection now.
        case installed
        /// It was lost while the observations were subscribed again.
        case lost
        /// The client was closed meanwhile.
        case closed
    }

    /// Opens a connection to `endpoint` (TCP or Unix socket, TLS when asked, `HELLO`), within the connect timeout.
    func open(_ endpoint: Endpoint) async throws(ClientError) -> SubscriptionClient {
        try await SubscriptionClient.connect(
            to: endpoint, name: name, token: token, timeout: options.connectTimeout, tls: tls)
    }

    /// Makes `client` the connection: first every observation is subscribed on it, then, in one step, the commands
    /// held while disconnected are handed to it in order and it becomes the connection.
    func install(_ client: SubscriptionClient) async -> Installed {
        let generation = state.withLock { $0.beginInstall() }
        while true {
            let step = state.withLock { state -> LinkState.InstallStep in
                let step = state.nextInstallStep(client, generation: generation)
                if case .done(let held) = step {
                    for command in held { send(command, on: client.connection) }
                }
                return step
            }
            switch step {
            case .closed:
                await client.close()
                return .closed
            case .done:
                client.connection.whenEnded { [weak self] error in
                    self?.lost(client.endpoint, generation: generation, error: error)
                }
                return .installed
            case .restore(let entries):
                for entry in entries {
                    do throws(ClientError) {
                        entry.offer(try await subscribe(entry, on: client), generation: generation)
                    } catch {
                        if Self.isRetryable(error) {
                            client.connection.closeNow()
                            return .lost
                        }
                        let known = state.withLock { state in
                            let known = state.observations.removeValue(forKey: entry.id) != nil
                            if known { state.report(.restoreFailed(pattern: entry.pattern, error)) }
                            return known
                        }
                        if known { entry.end(error) }
                    }
                    state.withLock { _ = $0.restored.insert(entry.id) }
                }
            }
        }
    }

    /// Subscribes `entry` on `client` (a watch checks with `GET` that its number is retained), within the request
    /// timeout.
    func subscribe(_ entry: ObservationEntry, on client: SubscriptionClient) async throws(ClientError) -> Subscription {
        let pending = Pending<Subscription>()
        return try await pending.wait(verb: "SUB", timeout: options.requestTimeout, timedOut: {}) {
            Task {
                do throws(ClientError) {
                    switch entry.kind {
                    case .messages(let from, let group):
                        pending.finish(.success(try await client.subscribe([entry.pattern], from: from, group: group)))
                    case .retained:
                        pending.finish(.success(try await client.subscribeRetained(entry.pattern)))
                    }
                } catch {
                    pending.finish(.failure(error))
                }
            }
        }.get()
    }

    /// The connection `generation` ended with `error`: when it was the current one, reconnect.
    private func lost(_ endpoint: Endpoint, generation: Int, error: ClientError) {
        guard state.withLock({ $0.lost(endpoint, generation: generation, error: error) }) else { return }
        Self.reconnect(self)
    }

    /// Tries the servers until one is connected or the client is closed, sleeping between attempts. Holds the client
    /// only during an attempt, so a client nothing uses any more is not kept alive by its reconnecting.
    private static func reconnect(_ client: ReconnectingClient) {
        Task { [weak client] in
            var delay = Duration.zero
            while true {
                if delay > .zero { try? await Task.sleep(for: delay) }
                guard let client, let next = await client.attempt() else { return }
                delay = next
            }
        }
    }

    /// One attempt to connect to the server the schedule names: nil when connected (or closed), else the wait before
    /// the next attempt.
    private func attempt() async -> Duration? {
        let endpoint = state.withLock { state -> Endpoint? in
            guard case .connecting = state.phase else { return nil }
            return state.schedule.endpoint
        }
        guard let endpoint else { return nil }
        let error: ClientError
        do throws(ClientError) {
            let client = try await open(endpoint)
            switch await install(client) {
            case .installed, .closed: return nil
            case .lost: error = .connectionLost
            }
        } catch let failure {
            error = failure
        }
        return state.withLock { $0.attemptFailed(endpoint, error: error) }
    }
}
