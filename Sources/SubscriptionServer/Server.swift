import CSubdShim
import Dispatch
import Logging
import SubscriptionCenter
import SubscriptionMQTT
import SubscriptionProtocol
import SubscriptionState
import SubscriptionSystem
import SubscriptionWire

#if canImport(Glibc)
    import Glibc
#endif

/// The daemon's engine: listening sockets, sessions and the subscription center, all owned by one serial queue.
///
/// Every socket is non-blocking and watched by a Dispatch source that targets ``queue``; the center is touched
/// only there, so no lock is needed (the redis model: one thread owns the data, the kernel does the waiting).
/// Each read handler parses every complete command, lets the center fan messages out (each one framed once; small
/// ones copied once more into the loop's frame log, of which each session that keeps up queues ranges, the rest
/// shared), writes between two reads what is worth writing early, then ends the turn by flushing every session that
/// got output with one writev each.
///
/// Use from any thread: the public methods hop onto the queue.
///
/// **Exclusivity.** Its `#if !DEBUG @exclusivity(unchecked)` properties keep the invariant stated on
/// ``EventLoop`` (release builds skip their checks; debug builds check them).
public final class Server: @unchecked Sendable {
    /// The queue that owns all state.
    public var queue: DispatchQueue { loop.queue }
    /// The event loop the sessions run on.
    let loop: EventLoop
    /// The subscription service center; what it fans out are publications, each framed once.
    let center: SubscriptionCenter<Publication>
    /// Configuration in force; ``reconfigure(_:)`` replaces it on a reload.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var configuration: ServerConfiguration
    /// Where events are logged.
    let logger: Logger
    /// Counters for STATS (the traffic counters live in ``loop``). `@exclusivity(unchecked)`: changed on every
    /// publish, only on the queue, and never through two overlapping accesses.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var stats = ServerStats()
    /// Messages published per number, for the metrics (a no-op while they are off). `@exclusivity(unchecked)` as
    /// ``stats``.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var numberCounters: NumberCounters
    /// The `metrics_listen` endpoint, while it serves.
    var metricsListener: MetricsListener?
    /// The configured users by name (``applyUsers(_:)``).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var users: [ExactName: UserAccount]
    /// The cluster bridge with `cluster:` (docs/CLUSTER.md), nil on a single node. Set once, before ``start()``, by
    /// the daemon (the bridge lives in the `SubscriptionCluster` target, which depends on this one).
    package var cluster: (any ClusterLink)? {
        didSet {
            isClustered = cluster != nil
            stats.clusterAcks = cluster == nil ? nil : ClusterAckCounters()
        }
    }
    /// True with a ``cluster`` link: the handlers check it before calling the server's cluster methods. A copy of
    /// `cluster != nil` kept as a plain stored Bool on purpose: computing it from the existential (or calling a
    /// server method) through a command's context costs retains and releases, 4 more per SUB+UNSUB (the guard's
    /// release.sub_unsub.refcount went from 71.05 to 75.05 when it was computed).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private(set) var isClustered = false

    private var listeners: [Listener] = []
    /// The TLS context new connections on `tls://` listeners get (nil without them); a reload replaces it.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var tlsContext: TLSContext?
    /// Runs ``housekeeping()`` a few times a second.
    private var housekeepingTimer: DispatchSourceTimer?
    /// Publishes `$SYS.stats` (``startSystemStats()``).
    var systemStatsTimer: DispatchSourceTimer?
    /// Posts `$SYS.numbers` (``startNumberActivity()``).
    var numberActivityTimer: DispatchSourceTimer?
    /// With `cluster:`: every node's latest STATS, for `$SYS.cluster.node` (Server+ClusterStats.swift).
    var clusterNodes = ClusterNodeTable()
    /// The saved state (`state_dir`), nil without one; see Server+State.swift.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var state: StateStore?
    /// True with a ``state``: a plain stored Bool that the publish path checks first, as ``isClustered``.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var savesState = false
    /// The turn's staged values, the sessions waiting for them, and whether saving works (State/).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var saving = StateSaving()
    /// Syncs (`fsync: everysec`) and compacts the saved state once a second.
    var stateTimer: DispatchSourceTimer?
    /// Every open session, by id.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var sessions: [UInt64: Session] = [:]
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private var nextSessionID: UInt64 = 1
    /// True once shutdown began: no new connections, every session closes as soon as its output is out.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private(set) var isDraining = false
    private var drainCompletion: (@Sendable () -> Void)?
    /// When the server was made, for uptime.
    let startedAt = ContinuousClock.now

    // MARK: MQTT (MQTT/)

    /// The MQTT clients' sessions by client identifier, connected or kept for a later connection.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var mqttSessions: [String: MQTTClientSession] = [:]
    /// The MQTT subscriptions waiting for an exact number to exist (a `#` filter's parent, a number removed), by that
    /// number (``mqttNumberCreated(_:)``).
    var mqttNumberWaiters: [String: [ObjectIdentifier: MQTTClientSession]] = [:]
    /// The MQTT topics of numbers delivered to MQTT clients (``mqttTopic(forNumber:)``).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var mqttTopics: [String: String?] = [:]
    /// The last number ``mqttTopic(forNumber:)`` mapped, and its topic.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var lastMQTTTopic: (number: String, topic: String?)?
    /// The PUBLISH packets of the publication delivered last (``mqttRendition(of:_:version:maximumPacketSize:now:)``).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var mqttRenditions = MQTTRenditions()
    /// The MQTT client whose command runs now (its session's identity), for no-local when its publication carries no
    /// MQTT part; nil for a line command.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var mqttPublisherID: ObjectIdentifier?
    /// The buffer MQTT deliveries are encoded into before they are queued.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var mqttScratch: [UInt8] = []
    /// The MQTT part of the publication the command running now makes (``attachMQTT(to:)``); nil for a line
    /// command's.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var mqttPublishing: MQTTMessage? {
        didSet { isPublishingMQTT = mqttPublishing != nil }
    }
    /// `mqttPublishing != nil`, a plain stored Bool the publish path reads first (reading the reference would retain
    /// and release it on every line publication).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private(set) var isPublishingMQTT = false

    /// Makes a server; nothing is bound until ``start()``.
    public init(configuration: ServerConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        self.loop = EventLoop(queue: DispatchQueue(label: "subd.loop"), threads: configuration.threads)
        self.numberCounters = NumberCounters(enabled: configuration.countsNumbers)
        self.users = Self.directory(of: configuration.users)
        self.center = SubscriptionCenter(
            limits: .init(
                maxSubscriptionsPerCustomer: configuration.maxSubscriptions, maxNumbers: configuration.maxNumbers)
        )
    }

    /// Creates the configured numbers, binds every listen address (or adopts `inheritedDescriptors`, the sockets
    /// systemd passed in) and starts accepting. Returns the addresses actually bound (real ports for port 0).
    /// Throws the first failure, having closed whatever it had bound.
    public func start(inheritedDescriptors: [Int32] = []) throws -> [ListenAddress] {
        try queue.sync {
            do {
                try createSystemNumbers()
            } catch {
                throw ConfigurationError(
                    key: "max_numbers", problem: "no room for the daemon's own $SYS numbers: \(error)")
            }
            try restoreState()
            for number in configuration.numbers {
                do {
                    if try center.create(number) { try saveCreated(number, retained: false) }
                } catch {
                    closeState()
                    throw ConfigurationError(key: "numbers", problem: "cannot create '\(number)': \(error)")
                }
            }
            var bound: [ListeningSocket] = []
            var boundTLS: [ListeningSocket] = []
            var boundWebSocket: [(ListeningSocket, WebSocketListen)] = []
            var boundMQTT: [(ListeningSocket, MQTTListen)] = []
            do {
                if inheritedDescriptors.isEmpty {
                    var addresses = configuration.listen
                    if let path = configuration.unixSocket { addresses.append(.unix(path: path)) }
                    for address in addresses {
                        bound.append(try ListeningSocket.bind(address, unixMode: configuration.unixSocketMode))
                    }
                    if configuration.usesTLS { tlsContext = try Self.makeTLSContext(configuration) }
                    for address in configuration.tlsListen {
                        boundTLS.append(try ListeningSocket.bind(address, unixMode: configuration.unixSocketMode))
                    }
                    for listen in configuration.webSocketListen {
                        let socket = try ListeningSocket.bind(listen.address, unixMode: configuration.unixSocketMode)
                        boundWebSocket.append((socket, listen))
                    }
                    for listen in configuration.mqttListen {
                        let socket = try ListeningSocket.bind(listen.address, unixMode: configuration.unixSocketMode)
                        boundMQTT.append((socket, listen))
                    }
                } else {
                    // A socket systemd passes in is served plain: a tls:// or ws:// listener there would silently be
                    // served as a plain one.
                    guard
                        configuration.tlsListen.isEmpty && configuration.webSocketListen.isEmpty
                            && configuration.mqttListen.isEmpty
                    else {
                        throw ConfigurationError(
                            key: "listen",
                            problem:
                                "tls://, ws:// and mqtt:// listeners cannot be socket-activated yet; start subd.service"
                        )
                    }
                    for fd in inheritedDescriptors { bound.append(try ListeningSocket.adopt(fd: fd)) }
                }
                try startMetrics()
            } catch {
                for socket in bound + boundTLS + boundWebSocket.map(\.0) + boundMQTT.map(\.0) {
                    Syscall.close(socket.fd)
                }
                closeState()
                throw error
            }
            for socket in bound { startAccepting(socket, serving: .lines) }
            for socket in boundTLS { startAccepting(socket, serving: .tls) }
            for (socket, listen) in boundWebSocket {
                startAccepting(socket, serving: .webSocket(path: listen.path, isTLS: listen.isTLS))
            }
            for (socket, listen) in boundMQTT { startAccepting(socket, serving: .mqtt(isTLS: listen.isTLS)) }
            startHousekeeping()
            startSystemStats()
            startNumberActivity()
            return (bound + boundTLS + boundWebSocket.map(\.0) + boundMQTT.map(\.0)).map(\.address)
        }
    }

    /// Stops accepting, closes every session gracefully (replies flushed, up to the drain deadline), then calls
    /// `completion` on the server queue.
    public func shutdown(completion: @escaping @Sendable () -> Void) {
        queue.async {
            guard !self.isDraining else { return }
            self.isDraining = true
            self.drainCompletion = completion
            for listener in self.listeners {
                // A suspended source must be resumed before it is cancelled.
                if listener.isPaused { listener.source.resume() }
                listener.source.cancel()
                if listener.socket.ownsPath, case .unix(let path) = listener.socket.address { unlink(path) }
            }
            self.listeners.removeAll()
            self.stopMetrics()
            self.housekeepingTimer?.cancel()
            self.housekeepingTimer = nil
            self.systemStatsTimer?.cancel()
            self.systemStatsTimer = nil
            self.numberActivityTimer?.cancel()
            self.numberActivityTimer = nil
            self.stateTimer?.cancel()
            self.stateTimer = nil
            for session in Array(self.sessions.values) {
                self.mqttShuttingDown(session)
                session.drain()
            }
            self.loop.endOfTurn()
            self.finishDrainIfDone()
            self.queue.asyncAfter(deadline: .now() + self.configuration.drainSeconds) {
                guard self.drainCompletion != nil else { return }
                self.logger.warning("drain deadline passed; dropping \(self.sessions.count) connection(s)")
                for session in Array(self.sessions.values) { session.fail(.shutdown) }
                self.finishDrainIfDone()
            }
        }
    }

    /// A point-in-time copy of the counters, from any thread (for the systemd status line).
    public func snapshot() -> ServerStats {
        queue.sync { currentStats() }
    }

    /// The counters with the gauges filled in. Only on ``queue`` (STATS, ``snapshot()`` and timers that run on the
    /// event loop itself read this).
    public func currentStats() -> ServerStats {
        dispatchPrecondition(condition: .onQueue(queue))
        var copy = stats
        copy.bytesIn = loop.traffic.bytesIn
        copy.bytesOut = loop.traffic.bytesOut
        copy.protocolErrors = loop.traffic.protocolErrors
        copy.threads = configuration.threads
        copy.helperWrites = loop.traffic.helperWrites
        copy.connections = sessions.count
        copy.numbers = center.clientNumberCount
        copy.subscriptions = center.subscriptionCount
        copy.mqttSessions = mqttSessions.count
        copy.cluster = cluster?.statistics
        return copy
    }

    // MARK: Accepting

    /// A listening socket and the source that watches it.
    private struct Listener {
        let socket: ListeningSocket
        let source: DispatchSourceRead
        /// True while accepting is paused after a failed accept (the source is suspended).
        var isPaused = false
    }

    /// How long accepting pauses after accept(2) failed (out of descriptors, out of memory).
    static let acceptPause = DispatchTimeInterval.milliseconds(250)

    private func startAccepting(_ socket: ListeningSocket, serving transport: ListenerTransport) {
        let source = DispatchSource.makeReadSource(fileDescriptor: socket.fd, queue: queue)
        // Strong capture: the server lives as long as its listeners; cancelling the source breaks the cycle.
        let isTCP = if case .tcp = socket.address { true } else { false }
        source.setEventHandler {
            self.acceptConnections(on: socket.fd, isTCP: isTCP, transport: transport)
            self.loop.endOfTurn()  // the $SYS.client.connected notifications
        }
        source.setCancelHandler { Syscall.close(socket.fd) }
        listeners.append(Listener(socket: socket, source: source))
        source.resume()
        logger.info("listening on \(transport.describe(socket.address))")
    }

    /// accept(2) ran out of descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM): the connection stays in the
    /// backlog, so the listener stays readable, and retrying at once would spin. Accepting pauses on that listener
    /// for ``acceptPause``. (Errors of one connection, such as ECONNABORTED, do not pause: the loop goes on.)
    private func pauseAccepting(on listenFD: Int32, after error: SystemCallError) {
        guard let index = listeners.firstIndex(where: { $0.socket.fd == listenFD }), !listeners[index].isPaused else {
            return
        }
        stats.acceptFailures += 1
        listeners[index].isPaused = true
        listeners[index].source.suspend()
        logger.warning("accept failed: \(error); accepting on \(listeners[index].socket.address) pauses for 250 ms")
        queue.asyncAfter(deadline: .now() + Self.acceptPause) {
            guard let index = self.listeners.firstIndex(where: { $0.socket.fd == listenFD }),
                self.listeners[index].isPaused
            else { return }
            self.listeners[index].isPaused = false
            self.listeners[index].source.resume()
        }
    }

    private func acceptConnections(on listenFD: Int32, isTCP: Bool, transport: ListenerTransport) {
        for _ in 0..<256 {
            let accepted: Int32?
            do {
                accepted = try Syscall.accept(listenFD)
            } catch {
                switch error.errno {
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    pauseAccepting(on: listenFD, after: error)
                    return
                default:
                    // ECONNABORTED, EPROTO, ENETDOWN...: that one connection failed; accept(2) says to go on.
                    logger.debug("accept failed for one connection: \(error)")
                    continue
                }
            }
            guard let fd = accepted else { return }
            guard !isDraining else {
                Syscall.close(fd)
                continue
            }
            guard sessions.count < configuration.maxConnections else {
                stats.refusedConnections += 1
                refuse(
                    fd, transport,
                    ProtocolError(.limit, "too many connections (max_connections is \(configuration.maxConnections))"))
                continue
            }
            if isTCP {
                _ = try? Syscall.setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1, "TCP_NODELAY")
                do {
                    try configuration.tcpKeepalive.apply(to: fd)
                } catch {
                    logger.warning("cannot set TCP keepalive on a new connection: \(error)")
                }
            }
            var tls: TLSStream?
            if transport.usesTLS {
                guard let stream = tlsContext?.makeStream(fd: fd) else {
                    logger.warning("cannot start TLS on a new connection: \(TLSContext.drainErrors())")
                    Syscall.close(fd)
                    continue
                }
                tls = stream
            }
            let session = Session(
                id: nextSessionID,
                fd: fd,
                isTCP: isTCP,
                peerAddress: ListeningSocket.peerAddress(of: fd).endpoint,
                loop: loop,
                owner: self,
                limits: configuration.protocolLimits,
                maxPending: configuration.maxPending,
                needsAuthentication: requiresAuthentication,
                tls: tls,
                webSocket: makeWebSocketTransport(for: transport),
                mqtt: transport.isMQTT ? makeMQTTFront() : nil
            )
            nextSessionID += 1
            sessions[session.id] = session
            stats.totalConnections += 1
            session.start()
            logger.debug("client connected", metadata: ["session": "\(session.id)"])
            post(
                .clientConnected,
                JSONObject([
                    ("session", .unsigned(session.id)), ("address", .string(session.peerAddress)),
                ]))
        }
    }

    /// Answers a connection the server will not serve with one error line (on a plain WebSocket listener, an HTTP
    /// 503 saying the same; on a `wss://` one nothing, as no TLS session is made for it), then closes it.
    private func refuse(_ fd: Int32, _ transport: ListenerTransport, _ error: ProtocolError) {
        var bytes: [UInt8] = []
        switch transport {
        case .webSocket(_, isTLS: false):
            bytes = HTTPResponse.text(503, "Service Unavailable", error.message + "\n").encoded()
        case .webSocket(_, isTLS: true), .mqtt(isTLS: true): break
        case .mqtt(isTLS: false):
            // 5.0's "Server unavailable" answer would need the client's CONNECT first; the close says it.
            break
        case .lines, .tls: ReplyEncoder.error(error, into: &bytes)
        }
        _ = bytes.withUnsafeBytes { try? Syscall.send(fd, $0) }
        Syscall.shutdownWrite(fd)
        Syscall.close(fd)
        logger.notice("refused a connection: \(error.message)")
    }

    // MARK: Housekeeping

    /// Every quarter second, on the queue: sessions past `command_timeout` or `auth_timeout` are told and closed,
    /// and idle sessions give back their buffers (redis's `clientsCron`).
    private func startHousekeeping() {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.housekeepingPeriod, repeating: Self.housekeepingPeriod)
        timer.setEventHandler { [unowned self] in self.housekeeping() }
        housekeepingTimer = timer
        timer.resume()
    }

    /// How often ``housekeeping()`` runs; a timeout closes a session at most this late.
    static let housekeepingPeriod = DispatchTimeInterval.milliseconds(250)

    private func housekeeping() {
        let policy = configuration.liveness
        let now = MonotonicClock.nanoseconds()
        let authenticationRequired = requiresAuthentication
        var expired: [(Session, LivenessPolicy.Expiry)] = []
        var expiredMQTT: [(Session, MQTTConnection, CloseReason)] = []
        for session in sessions.values {
            session.releaseIdleMemory()
            // A session already closing was told (or is going anyway); it is not checked again.
            guard session.machine.phase == .open else { continue }
            if let front = session.mqtt {
                if let reason = mqttExpiry(of: session, front, now: now) {
                    expiredMQTT.append((session, front, reason))
                    continue
                }
                // A partial packet is a command not finished; an MQTT client needs no HELLO.
                if !policy.isOff, front.phase == .connected,
                    let expiry = policy.expiry(of: session.livenessFacts, now: now, authenticationRequired: false)
                {
                    expired.append((session, expiry))
                }
                continue
            }
            if !policy.isOff,
                let expiry = policy.expiry(
                    of: session.livenessFacts, now: now, authenticationRequired: authenticationRequired)
            {
                expired.append((session, expiry))
            }
        }
        mqttHousekeeping(now: now)
        for (session, front, reason) in expiredMQTT { mqttExpired(session, front, reason: reason) }
        guard !expired.isEmpty || !expiredMQTT.isEmpty else { return }
        for (session, expiry) in expired {
            logger.info(
                "closing a connection: \(expiry.error.message)", metadata: ["session": "\(session.id)"])
            session.expire(expiry)
        }
        loop.endOfTurn()
    }

    // MARK: Closing

    private func finishDrainIfDone() {
        guard isDraining, sessions.isEmpty, let completion = drainCompletion else { return }
        drainCompletion = nil
        closeState()
        completion()
    }
}

extension Server: SessionOwner {
    func sessionStoppedServing(_ session: Session) {
        clusterSessionLeaves(session)
        center.removeAll(session)
    }

    func sessionFellBehind(_ session: Session) {
        logger.warning(
            "slow consumer cut off: pending output passed max_pending",
            metadata: [
                "session": "\(session.id)", "held": "\(session.output.heldBytes)",
                "max_pending": "\(configuration.maxPending)",
            ]
        )
        post(
            .slowConsumer,
            JSONObject(
                identity(of: session) + [
                    ("pending_bytes", .integer(Int64(session.output.heldBytes))),
                    ("max_pending", .integer(Int64(configuration.maxPending))),
                ]))
    }

    func sessionFailed(_ session: Session, with error: ProtocolError) {
        logger.debug(
            "closing session after error", metadata: ["session": "\(session.id)", "error": "\(error.code.rawValue)"])
    }

    /// Out of the center, out of the table, descriptor released, counted under its reason.
    func sessionClosed(_ session: Session, reason: CloseReason) {
        guard sessions.removeValue(forKey: session.id) != nil else { return }
        if session.mqtt != nil { mqttConnectionEnded(session) }
        clusterSessionLeaves(session)
        center.removeAll(session)
        session.tearDown()
        stats.closed[reason, default: 0] += 1
        logger.debug("client disconnected", metadata: ["session": "\(session.id)", "reason": "\(reason.rawValue)"])
        post(.clientDisconnected, JSONObject(identity(of: session) + [("reason", .string(reason.rawValue))]))
        if isDraining { finishDrainIfDone() }
    }
}
