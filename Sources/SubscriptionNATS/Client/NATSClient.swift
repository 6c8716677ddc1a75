import Dispatch
import Logging
import SubscriptionSystem

/// A NATS client on a serial DispatchQueue it is given (the server's event-loop queue, in subd): publish,
/// subscribe (with queue groups), request/reply, flush, and reconnection across the configured servers and those
/// the cluster advertises, with every subscription restored.
///
/// **Threading.** Every method must be called on ``queue``, and every callback (message handlers, status and error
/// callbacks, completions) runs on it; the client never blocks it (name lookups of host names run on a global queue
/// and come back). It does not own a thread: the queue may be shared with other work. Debug builds check the
/// queue. `@unchecked Sendable`: all mutable state is confined to ``queue``.
///
/// **Output.** Frames are appended to a bounded buffer (``NATSClientOptions/maxPendingBytes``) and written once per
/// turn of the queue, in one `send(2)` as far as the socket takes it; the rest waits for a write source. While
/// disconnected, publications are held in the same buffer and sent after the reconnect, behind the restored
/// subscriptions; what was queued for a connection that broke is dropped (NATS is at most once).
///
/// **Life.** ``connect(servers:options:)`` once; the client then keeps a connection until ``close()``, which is also
/// what releases it (its timer and its subscriptions' handlers hold it until then). It reports
/// ``NATSStatus`` changes to ``onStatusChange`` and errors that change no state (a failed attempt, an async
/// `-ERR`) to ``onError``.
public final class NATSClient: @unchecked Sendable {
    /// The queue everything runs on.
    public let queue: DispatchQueue
    /// Told of every connection change, on ``queue``. Set it before ``connect(servers:options:)``.
    public var onStatusChange: (@Sendable (NATSStatus) -> Void)?
    /// Told of errors that change no state: a failed connection attempt, a `-ERR` once connected (a permissions
    /// violation, say). On ``queue``.
    public var onError: (@Sendable (NATSError) -> Void)?

    let logger: Logger
    var options = NATSClientOptions()
    var machine = NATSConnectionStateMachine(options: NATSClientOptions())
    var socket: NATSSocket?
    var parser = NATSParser()
    /// Frames that go before everything else: the handshake's CONNECT and PING, and the restored subscriptions.
    var control = OutboundBuffer()
    /// Everything else; held (not written) while the handshake is not done.
    var output = OutboundBuffer()
    var isFlushScheduled = false
    var subscriptions = SubscriptionTable()
    var flushWaiters: [UInt64: @Sendable (Result<Void, NATSError>) -> Void] = [:]
    var nextFlushID: UInt64 = 1
    var pingTimer: DispatchSourceTimer?
    /// The last INFO of any connection: its `max_payload` and header support apply while reconnecting.
    public internal(set) var serverInfo: NATSServerInfo?
    /// The request/reply inbox, made on the first request.
    var inbox: RequestInbox?
    /// Parts of this module told of status changes too (a key-value watcher reloads after a reconnect).
    var statusObservers: [UInt64: @Sendable (NATSStatus) -> Void] = [:]
    var nextObserverID: UInt64 = 1

    /// Bytes asked of one read(2).
    static let readSize = 65_536
    /// Reads per turn before the client lets other work on the queue run.
    static let readsPerTurn = 8

    /// A client that will run on `queue` and log to `logger` (at info and below).
    public init(queue: DispatchQueue, logger: Logger = Logger(label: "subd.nats")) {
        self.queue = queue
        self.logger = logger
    }

    /// Where the connection is.
    public var phase: NATSConnectionStateMachine.Phase { machine.phase }

    /// True when connected (the handshake done).
    public var isConnected: Bool { machine.phase == .connected }

    /// The server tried last (the connected one, when connected).
    public var currentServer: NATSServerAddress? { machine.currentServer }

    /// Every server the client knows: those given and those the cluster advertised.
    public var knownServers: [NATSServerAddress] { machine.knownServers }

    /// Bytes waiting to be sent (held or queued).
    public var pendingByteCount: Int { control.count + output.count }

    /// Starts connecting to `servers`, tried in order; the client then keeps a connection (or looks for one) until
    /// ``close()``. Connection changes arrive at ``onStatusChange``. Call once.
    ///
    /// - Throws: ``NATSError/noServers`` for an empty list.
    public func connect(servers: [NATSServerAddress], options: NATSClientOptions = NATSClientOptions())
        throws(NATSError)
    {
        assertOnQueue()
        guard !servers.isEmpty else { throw .noServers }
        precondition(machine.phase == .idle, "connect(servers:options:) called twice")
        self.options = options
        machine = NATSConnectionStateMachine(options: options)
        startPingTimer()
        perform(machine.start(servers: servers, now: MonotonicClock.nanoseconds()))
    }

    /// Publishes `payload` to `subject` (a literal subject, no wildcard), with `headers` (sent as `HPUB`) and a
    /// subject for replies. While disconnected the message is held and sent after the reconnect.
    ///
    /// - Throws: ``NATSError/invalidSubject(_:problem:)``, ``NATSError/invalidHeader(name:problem:)``,
    ///   ``NATSError/payloadTooBig(size:limit:)`` (over the server's `max_payload`, headers included),
    ///   ``NATSError/headersNotSupported``, ``NATSError/outboundBufferFull(limit:)``, ``NATSError/closed``.
    public func publish(
        subject: String, replyTo: String? = nil, headers: NATSHeaders? = nil, payload: some Collection<UInt8>
    ) throws(NATSError) {
        assertOnQueue()
        guard machine.phase != .closed else { throw .closed }
        if let info = serverInfo {
            if headers != nil && !info.supportsHeaders { throw .headersNotSupported }
            let size = payload.count + (headers.map(NATSHeaderBlock.encodedCount) ?? 0)
            guard size <= info.maxPayload else { throw .payloadTooBig(size: size, limit: info.maxPayload) }
        }
        // The frame's size at most: the line's words, two counts, CRLFs, the header block and the payload.
        let frameBound =
            subject.utf8.count + (replyTo?.utf8.count ?? 0) + payload.count
            + (headers.map(NATSHeaderBlock.encodedCount) ?? 0) + 64
        guard pendingByteCount + frameBound <= options.maxPendingBytes else {
            throw .outboundBufferFull(limit: options.maxPendingBytes)
        }
        try NATSEncoder.publish(
            subject: subject, replyTo: replyTo, headers: headers, payload: payload, into: &output.bytes)
        if machine.phase == .connected { scheduleFlush() }
    }

    /// Subscribes to `subject` (wildcards allowed), in queue group `queue` if given (each message goes to one
    /// member of the group), and returns the subscription's sid. `handler` gets every message on ``queue``. Sent at
    /// once when connected, and again after every reconnect.
    ///
    /// - Throws: ``NATSError/invalidSubject(_:problem:)``, ``NATSError/invalidQueue(_:problem:)``,
    ///   ``NATSError/closed``.
    @discardableResult
    public func subscribe(
        subject: String, queue group: String? = nil, handler: @escaping @Sendable (NATSMessage) -> Void
    ) throws(NATSError) -> UInt64 {
        assertOnQueue()
        guard machine.phase != .closed else { throw .closed }
        var frame: [UInt8] = []
        // Encoding checks the subject and the queue name, whether or not the frame is sent now.
        try NATSEncoder.subscribe(subject: subject, queue: group, sid: 0, into: &frame)
        let sid = subscriptions.add(subject: subject, queue: group, handler: handler)
        if machine.phase == .connected {
            try? NATSEncoder.subscribe(subject: subject, queue: group, sid: sid, into: &output.bytes)
            scheduleFlush()
        }
        return sid
    }

    /// Ends subscription `sid` now, or, with `max`, once it has delivered `max` messages in all (counting those
    /// delivered already). An unknown sid is ignored.
    public func unsubscribe(_ sid: UInt64, after max: Int? = nil) {
        assertOnQueue()
        let connected = machine.phase == .connected
        if let max {
            guard let remaining = subscriptions.limit(sid, to: max) else { return }
            guard connected else { return }
            NATSEncoder.unsubscribe(sid: sid, max: remaining == 0 ? nil : remaining, into: &output.bytes)
        } else {
            guard subscriptions.remove(sid), connected else { return }
            NATSEncoder.unsubscribe(sid: sid, into: &output.bytes)
        }
        scheduleFlush()
    }

    /// Sends a PING and calls `completion` when its PONG comes: everything sent before has been processed by the
    /// server. Fails with ``NATSError/notConnected`` when not connected, ``NATSError/timeout`` after `timeout`.
    public func flush(
        timeout: Duration = .seconds(5), completion: @escaping @Sendable (Result<Void, NATSError>) -> Void
    ) {
        assertOnQueue()
        let id = nextFlushID
        nextFlushID += 1
        flushWaiters[id] = completion
        queue.asyncAfter(deadline: .now() + Self.interval(timeout)) { [self] in
            guard let waiter = flushWaiters.removeValue(forKey: id) else { return }
            waiter(.failure(.timeout))
        }
        perform(machine.flushRequested(id: id))
    }

    /// Closes the connection and stops reconnecting: pending flushes and requests fail with ``NATSError/closed``,
    /// unsent output is dropped, and ``onStatusChange`` gets ``NATSStatus/closed(reason:)``. Idempotent.
    public func close() {
        assertOnQueue()
        perform(machine.closeRequested())
    }

    /// Adds an observer of status changes (called after ``onStatusChange``); returns its id for
    /// ``removeStatusObserver(_:)``.
    func addStatusObserver(_ observer: @escaping @Sendable (NATSStatus) -> Void) -> UInt64 {
        let id = nextObserverID
        nextObserverID += 1
        statusObservers[id] = observer
        return id
    }

    /// Removes an observer added with ``addStatusObserver(_:)``.
    func removeStatusObserver(_ id: UInt64) {
        statusObservers[id] = nil
    }

    /// Checks (in debug builds) that the caller is on ``queue``.
    @inline(__always)
    func assertOnQueue() {
        #if DEBUG
            dispatchPrecondition(condition: .onQueue(queue))
        #endif
    }

    /// A Duration as a DispatchTimeInterval (nanoseconds).
    static func interval(_ duration: Duration) -> DispatchTimeInterval {
        .nanoseconds(Int(clamping: NATSConnectionStateMachine.nanoseconds(duration)))
    }
}
