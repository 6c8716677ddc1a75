import Dispatch

/// A client of one or more subd servers that stays connected: when the connection is lost it connects again (with
/// backoff, over the list of servers), subscribes its observations and watches again, and sends the commands made
/// meanwhile. Its calls are those of the in-process `NotificationHub` (SubscriptionNotifications), made `async`:
///
/// | NotificationHub | ReconnectingClient |
/// | --- | --- |
/// | `try hub.create("CART.count", retained: true)` | `try await client.create("CART.count", retained: true)` |
/// | `try hub.post("CART.changes", from: "apple", text: "plus")` | `try await client.post("CART.changes", text: ...)` |
/// | `for await note in try hub.observe("CART.>")` | `for try await note in try await client.observe("CART.>")` |
/// | `for await change in try hub.watch("CART.count")` | `for try await change in try await client.watch(...)` |
/// | `try hub.value(of: "CART.count")` | `try await client.value(of: "CART.count")` |
/// | `HubError.notFound` | ``ClientError/notFound(_:)`` |
///
/// The sender of a post is the client's own `name` (subd's `HELLO name=`), given once to
/// ``connect(to:name:token:tls:options:)``.
///
/// **Reconnecting.** Servers are tried in the order given; after a failed attempt the next one is tried, after a
/// wait that doubles up to a cap, with jitter (``Backoff``). After a loss the lost server is tried first, at once.
/// ``events()`` tells the application what happens (``ConnectionEvent``).
///
/// **While disconnected**, commands wait in a bounded outbound buffer (``Options/outboundBufferLimit``) and are sent,
/// in order, once the observations are subscribed again; a command that does not fit is refused at once with
/// ``ClientError/outboundBufferFull(bytes:limit:)``, never dropped later. A command waiting for its reply when the
/// connection broke fails with ``ClientError/connectionLost`` and is not sent again (it may have been carried out:
/// sending it again could deliver a message twice). Every command has a ``Options/requestTimeout``.
///
/// **Delivery.** Observations and watches go on across reconnections; no message is delivered twice, and a watch
/// reports the revisions it missed while away as a ``Watch/Gap``. Messages published while no connection was up are
/// not received: subd delivers at most once, to the sessions subscribed at the time.
///
/// ```swift
/// let servers = try ["10.0.0.1:7827", "10.0.0.2:7827"].map { try Endpoint(parsing: $0, for: .connecting) }
/// let client = try await ReconnectingClient.connect(to: servers, name: "cart")
/// let counts = try await client.watch("CART.count")
/// try await client.post("CART.count", text: "1")
/// for try await change in counts {
///     if let gap = change.gap { print("missed", gap) }
///     print(change.old?.text ?? "(none)", "->", change.new.text ?? "")
/// }
/// await client.close()
/// ```
public final class ReconnectingClient: Sendable {
    /// A message as an ``Observation`` delivers it: the network's `NotificationHub.Notification` (number, payload,
    /// `from`, info pairs, revision, group).
    public typealias Notification = ReceivedMessage

    /// The servers, in the order they are tried.
    public let servers: [Endpoint]
    /// The client name given to every server (`HELLO name=`): the `from` of what this client posts.
    public let name: String?
    /// The settings it was made with.
    public let options: Options
    let token: String?
    let tls: TLSOptions?
    let state: Guarded<LinkState>

    private init(servers: [Endpoint], name: String?, token: String?, tls: TLSOptions?, options: Options) {
        self.servers = servers
        self.name = name
        self.token = token
        self.tls = tls
        self.options = options
        state = Guarded(
            LinkState(
                schedule: ReconnectSchedule(servers: servers, backoff: options.backoff),
                buffer: OutboundBuffer(limit: options.outboundBufferLimit)))
    }

    deinit {
        // Reached only when nothing uses the client any more (every observation holds it): end what is left.
        let ending = state.withLock { $0.close() }
        ending.client?.connection.closeNow()
        ending.run()
    }

    /// Connects to the first of `servers` that answers (each is tried once, in order) and returns the client, which
    /// from then on keeps a connection to one of them until ``close()``.
    ///
    /// ```swift
    /// let server = try Endpoint(parsing: "127.0.0.1:7827", for: .connecting)
    /// let client = try await ReconnectingClient.connect(to: [server])
    /// ```
    ///
    /// - Parameters:
    ///   - servers: Where subd listens, in the order to try them (at least one).
    ///   - name: The client name others can filter on (`observe(_:from:)`), the `from` of this client's posts.
    ///   - token: The secret, for a server with users.
    ///   - tls: Speak TLS to every server (see ``TLSOptions``); nil for plain.
    ///   - options: Timeouts, backoff and the outbound buffer.
    /// - Throws: the last server's error when none could be reached (``ClientError/connectFailed(endpoint:reason:)``,
    ///   ``ClientError/timeout(verb:after:)``); a refusal of `HELLO` (``ClientError/auth(_:)``) at once; a name or
    ///   token that breaks the rules before anything is sent.
    public static func connect(
        to servers: [Endpoint], name: String? = nil, token: String? = nil, tls: TLSOptions? = nil,
        options: Options = Options()
    ) async throws(ClientError) -> ReconnectingClient {
        guard !servers.isEmpty else { throw .invalidArgument("a ReconnectingClient needs at least one server") }
        _ = try Command.hello(name: name, token: token)
        let client = ReconnectingClient(servers: servers, name: name, token: token, tls: tls, options: options)
        var lastError = ClientError.connectionLost
        for _ in servers {
            let endpoint = client.state.withLock { $0.schedule.endpoint }
            do throws(ClientError) {
                let connection = try await client.open(endpoint)
                if case .installed = await client.install(connection) { return client }
                lastError = .connectionLost
            } catch {
                guard Self.isRetryable(error) else {
                    await client.close()
                    throw error
                }
                lastError = error
            }
            client.state.withLock { $0.schedule.failed() }
        }
        await client.close()
        throw lastError
    }

    /// Connects to `server` alone, as ``connect(to:name:token:tls:options:)`` does with a list of one.
    public static func connect(
        to server: Endpoint, name: String? = nil, token: String? = nil, tls: TLSOptions? = nil,
        options: Options = Options()
    ) async throws(ClientError) -> ReconnectingClient {
        try await connect(to: [server], name: name, token: token, tls: tls, options: options)
    }

    /// The server connected to now; nil while disconnected.
    public var server: Endpoint? {
        state.withLock { state in
            if case .connected(let client, _) = state.phase { return client.endpoint }
            return nil
        }
    }

    /// The events of the connection from now on (``ConnectionEvent``), until ``close()``. The stream keeps the 64
    /// newest events its reader has not taken. Each call makes a stream of its own.
    ///
    /// ```swift
    /// Task {
    ///     for await event in client.events() { print("subd:", event) }
    /// }
    /// ```
    public func events() -> AsyncStream<ConnectionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: ConnectionEvent.self, bufferingPolicy: .bufferingNewest(64))
        let added = state.withLock { $0.addListener(continuation) }
        if let id = added {
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { $0.removeListener(id) }
            }
        } else {
            continuation.yield(.closed)
            continuation.finish()
        }
        return stream
    }

    /// Ends the client: sends `QUIT` on the connection (observations and watches end without an error), fails the
    /// commands held in the outbound buffer with ``ClientError/connectionLost``, and stops reconnecting. A server that
    /// does not answer `QUIT` within the request timeout (5 s without one) is left without its answer. Later calls
    /// fail with ``ClientError/connectionLost``. Calling it again does nothing.
    public func close() async {
        let ending = state.withLock { $0.close() }
        ending.run()
        guard let client = ending.client else { return }
        let connection = client.connection
        let timer = DispatchWorkItem { connection.closeNow() }
        DispatchQueue.global().asyncAfter(
            deadline: .now() + SubscriptionClient.interval(options.requestTimeout ?? .seconds(5)), execute: timer)
        await client.close()
        timer.cancel()
    }

    /// Forgets the observation `id` (it ended, or nothing uses it any more): it is not subscribed again.
    func forget(_ id: Int) {
        let entry = state.withLock { $0.observations.removeValue(forKey: id) }
        entry?.end(nil)
    }

    /// True for the errors after which another attempt, or another server, can help.
    static func isRetryable(_ error: ClientError) -> Bool {
        switch error {
        case .connectFailed, .connectionLost, .protocolViolation, .timeout, .limit: return true
        default: return false
        }
    }
}
