/// The life of a NATS client connection as a plain value: events in, actions out (like subd's own
/// `ConnectionStateMachine`). No sockets, no Dispatch, no clock: times come in as ``MonotonicClock`` nanoseconds;
/// ``NATSClient`` performs the actions it returns, in order.
///
/// ```
/// idle --start--> connecting --socketOpened--> awaitingInfo --INFO--> awaitingPong --PONG--> connected
///                     ^        (CONNECT and PING sent on INFO)                                   |
///                     +-- reconnectTimerFired <-- waitingToReconnect <-- lost (any failure) <----+
/// ```
/// A failure at any step (connect error, timeout, `-ERR` during the handshake, EOF, a protocol error, too many
/// unanswered PINGs) leads to the next server of the ``NATSServerPool`` (configured ones, then those INFO
/// advertised), at once or after its `reconnectWait`. At the handshake's PONG every live subscription is sent
/// again and publications held while disconnected are released. The server's PINGs are answered at any time.
public struct NATSConnectionStateMachine {
    /// Where the connection is.
    public enum Phase: Equatable, Sendable {
        /// ``start(servers:now:)`` was not called yet.
        case idle
        /// A TCP connect is in progress.
        case connecting
        /// The socket is open; the server's INFO is awaited.
        case awaitingInfo
        /// CONNECT and PING were sent; the PONG that ends the handshake is awaited.
        case awaitingPong
        /// Ready: frames flow.
        case connected
        /// Waiting for a server's `reconnectWait` to pass before trying it.
        case waitingToReconnect
        /// Stopped for good.
        case closed
    }

    /// What the client must do, in order.
    public enum Action: Equatable, Sendable {
        /// Open a non-blocking TCP connection to the server; report ``socketOpened()`` or ``socketFailed(_:now:)``.
        /// The attempt number is passed back to ``connectTimedOut(attempt:now:)`` after the connect timeout.
        case openSocket(NATSServerAddress, attempt: UInt64)
        /// Write `CONNECT` with these fields, then `PING`, ahead of anything held.
        case sendConnect(NATSConnectFields)
        /// Write `PING`.
        case sendPing
        /// Write `PONG`.
        case sendPong
        /// The handshake is done: write `SUB` (and `UNSUB <max>`) for every live subscription, then release the
        /// output held while disconnected.
        case restoreSubscriptions
        /// Cancel the socket's sources and close it.
        case closeSocket
        /// Drop the output queued for the connection that broke (it is at most once; a half-written frame cannot
        /// be resumed on another connection). Output held while disconnected is kept.
        case dropUnsentOutput
        /// Call ``reconnectTimerFired(now:)`` after this many nanoseconds.
        case scheduleReconnect(afterNanoseconds: UInt64)
        /// Complete the flush with this id: its PONG came.
        case completeFlush(UInt64)
        /// Fail these flushes.
        case failFlushes([UInt64], NATSError)
        /// Tell the owner.
        case report(NATSStatus)
        /// Tell the owner of an error that changes no state (an async `-ERR`, a failed attempt).
        case reportError(NATSError)
    }

    /// Who waits for each PONG, oldest first (the server answers PINGs in order).
    enum PongWaiter: Equatable {
        /// The handshake's PING.
        case handshake
        /// A liveness PING.
        case liveness
        /// A ``flushRequested(id:)``.
        case flush(UInt64)
    }

    /// Where the connection is.
    public private(set) var phase = Phase.idle
    /// The servers and their attempts.
    private(set) var pool = NATSServerPool([])
    /// The last INFO of the current connection.
    public private(set) var serverInfo: NATSServerInfo?
    /// The number of the current (or last) connection attempt.
    public private(set) var attempt: UInt64 = 0
    /// Liveness PINGs sent and not answered.
    public private(set) var outstandingPings = 0
    private var pongWaiters: [PongWaiter] = []
    private let options: NATSClientOptions

    /// A machine for a client with `options`.
    public init(options: NATSClientOptions) {
        self.options = options
    }

    /// The server tried last (the connected one, when connected).
    public var currentServer: NATSServerAddress? { pool.currentAddress }

    /// Every server the client knows, configured and discovered.
    public var knownServers: [NATSServerAddress] { pool.entries.map(\.address) }

    /// True when the socket is open (from ``socketOpened()`` to its loss).
    public var hasSocket: Bool { phase == .awaitingInfo || phase == .awaitingPong || phase == .connected }

    // MARK: Events

    /// Starts connecting to `servers` (tried in order). Only from ``Phase/idle``.
    public mutating func start(servers: [NATSServerAddress], now: UInt64) -> [Action] {
        precondition(phase == .idle, "start(servers:) called twice (phase \(phase))")
        pool = NATSServerPool(servers)
        return tryNextServer(now: now, lastError: .noServers)
    }

    /// The TCP connection is made.
    public mutating func socketOpened() -> [Action] {
        guard phase == .connecting else { return [] }
        phase = .awaitingInfo
        return []
    }

    /// The connection attempt or the connection failed (connect error, EOF, read or write error).
    public mutating func socketFailed(_ error: NATSError, now: UInt64) -> [Action] {
        guard phase == .connecting || hasSocket else { return [] }
        return lost(error, now: now)
    }

    /// The server's bytes broke the protocol.
    public mutating func protocolViolation(_ error: NATSProtocolError, now: UInt64) -> [Action] {
        guard hasSocket else { return [] }
        return lost(.protocolError(error), now: now)
    }

    /// The attempt `attempt` took longer than the connect timeout.
    public mutating func connectTimedOut(attempt: UInt64, now: UInt64) -> [Action] {
        guard attempt == self.attempt, phase == .connecting || phase == .awaitingInfo || phase == .awaitingPong else {
            return []
        }
        return lost(.connectionFailed(server: currentServer?.description ?? "?", reason: "timed out"), now: now)
    }

    /// An INFO arrived: during the handshake, CONNECT and PING go out; later, it only teaches new servers.
    public mutating func infoReceived(_ info: NATSServerInfo, now: UInt64) -> [Action] {
        switch phase {
        case .awaitingInfo:
            serverInfo = info
            if options.discoverServers { pool.learn(info.connectURLs) }
            if info.tlsRequired { return lost(.tlsRequired(server: currentServer?.description ?? "?"), now: now) }
            phase = .awaitingPong
            pongWaiters = [.handshake]
            let fields = NATSConnectFields(
                name: options.name, echo: options.echo,
                authentication: currentServer?.authentication ?? options.authentication)
            return [.sendConnect(fields), .sendPing]
        case .awaitingPong, .connected:
            serverInfo = info
            if options.discoverServers { pool.learn(info.connectURLs) }
            return []
        case .idle, .connecting, .waitingToReconnect, .closed:
            return []
        }
    }

    /// A PING from the server.
    public mutating func pingReceived() -> [Action] {
        hasSocket ? [.sendPong] : []
    }

    /// A PONG: answers the oldest PING.
    public mutating func pongReceived() -> [Action] {
        guard hasSocket, !pongWaiters.isEmpty else { return [] }
        switch pongWaiters.removeFirst() {
        case .handshake:
            guard phase == .awaitingPong, let server = currentServer, let info = serverInfo else { return [] }
            phase = .connected
            pool.currentConnected()
            return [.restoreSubscriptions, .report(.connected(server: server, info: info))]
        case .liveness:
            outstandingPings = max(0, outstandingPings - 1)
            return []
        case .flush(let id):
            return [.completeFlush(id)]
        }
    }

    /// `-ERR`: during the handshake the attempt failed (bad credentials, say); once connected it is reported
    /// (the server closes the connection itself after the errors that end it).
    public mutating func errorReceived(_ text: String, now: UInt64) -> [Action] {
        switch phase {
        case .awaitingInfo, .awaitingPong: return lost(.serverError(text), now: now)
        case .connected: return [.reportError(.serverError(text))]
        case .idle, .connecting, .waitingToReconnect, .closed: return []
        }
    }

    /// The liveness timer: a PING, unless too many are unanswered already (then the connection is replaced).
    public mutating func pingTimerFired(now: UInt64) -> [Action] {
        guard phase == .connected else { return [] }
        guard outstandingPings < options.maxPingsOutstanding else { return lost(.staleConnection, now: now) }
        outstandingPings += 1
        pongWaiters.append(.liveness)
        return [.sendPing]
    }

    /// A flush (a PING whose PONG completes it) was asked for; it fails at once when not connected.
    public mutating func flushRequested(id: UInt64) -> [Action] {
        switch phase {
        case .connected:
            pongWaiters.append(.flush(id))
            return [.sendPing]
        case .closed:
            return [.failFlushes([id], .closed)]
        default:
            return [.failFlushes([id], .notConnected)]
        }
    }

    /// The wait before the next attempt is over.
    public mutating func reconnectTimerFired(now: UInt64) -> [Action] {
        guard phase == .waitingToReconnect, let server = currentServer else { return [] }
        return open(server)
    }

    /// The owner closes the client.
    public mutating func closeRequested() -> [Action] {
        guard phase != .closed else { return [] }
        var actions: [Action] = []
        if phase == .connecting || hasSocket { actions.append(.closeSocket) }
        let flushes = takeFlushWaiters()
        if !flushes.isEmpty { actions.append(.failFlushes(flushes, .closed)) }
        phase = .closed
        actions.append(.report(.closed(reason: nil)))
        return actions
    }

    // MARK: Transitions

    /// The socket (or the attempt) is gone: close it, fail the flushes, and go on with the next server.
    private mutating func lost(_ error: NATSError, now: UInt64) -> [Action] {
        let wasConnected = phase == .connected
        var actions: [Action] = [.closeSocket]
        if wasConnected { actions.append(.dropUnsentOutput) } else { pool.currentFailed() }
        let flushes = takeFlushWaiters()
        if !flushes.isEmpty { actions.append(.failFlushes(flushes, error)) }
        pongWaiters = []
        outstandingPings = 0
        actions.append(wasConnected ? .report(.disconnected(reason: error)) : .reportError(error))
        return actions + tryNextServer(now: now, lastError: error)
    }

    private mutating func tryNextServer(now: UInt64, lastError: NATSError) -> [Action] {
        guard
            let (server, delay) = pool.next(
                now: now, reconnectWait: Self.nanoseconds(options.reconnectWait),
                maxAttempts: options.maxReconnectAttempts)
        else {
            phase = .closed
            return [.report(.closed(reason: lastError))]
        }
        if delay > 0 {
            phase = .waitingToReconnect
            return [.scheduleReconnect(afterNanoseconds: delay)]
        }
        return open(server)
    }

    private mutating func open(_ server: NATSServerAddress) -> [Action] {
        phase = .connecting
        attempt += 1
        serverInfo = nil
        return [.openSocket(server, attempt: attempt)]
    }

    private mutating func takeFlushWaiters() -> [UInt64] {
        let ids = pongWaiters.compactMap { waiter -> UInt64? in
            if case .flush(let id) = waiter { return id }
            return nil
        }
        pongWaiters.removeAll { if case .flush = $0 { return true } else { return false } }
        return ids
    }

    /// A duration in nanoseconds (negative as zero).
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }
}
