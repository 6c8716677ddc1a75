import CSubdShim
import Dispatch
import SubscriptionCenter
import SubscriptionCommands
import SubscriptionMQTT
import SubscriptionProtocol
import SubscriptionSystem
import SubscriptionWebSocket

#if canImport(Glibc)
    import Glibc
#endif

/// One client connection: its socket, parser, output queue and Dispatch sources, driven by a
/// ``ConnectionStateMachine``.
///
/// A session is a ``Customer`` of the center, held there until it is removed (``CustomerRetention/untilRemoved``): it
/// leaves the center the moment it stops serving. It lives in its owner's session table until it closes, and every
/// method runs on the loop's queue. The state machine decides; this class performs its actions on the socket. It knows
/// the engine only through two narrow neighbours: the ``EventLoop`` (queue, buffers, end-of-turn flushing) and its
/// ``SessionOwner`` (commands, and the news of its end). Closing is graceful where the protocol allows: the reply is
/// flushed, the write side is shut down, and the input is drained until the peer closes (so the kernel does not reset
/// the connection and destroy the reply), with a deadline. `@unchecked Sendable`: confined to that queue.
///
/// **Exclusivity.** Its `#if !DEBUG @exclusivity(unchecked)` properties keep the invariant stated on
/// ``EventLoop`` (release builds skip their checks; debug builds check them).
final class Session: SessionCustomer, @unchecked Sendable {
    typealias Message = Publication

    /// The session id shown in HELLO's reply.
    let id: UInt64
    /// The socket (its transport's).
    var fd: Int32 { transport.fd }
    /// True for a TCP connection (keepalive applies), false for a Unix socket.
    let isTCP: Bool
    /// The peer's address (`127.0.0.1:51000`, `unix`), for logs and `$SYS` notifications.
    let peerAddress: String
    /// How its bytes travel: the socket, TLS, WebSocket frames. The session reads and writes only through it.
    let transport: SessionTransport
    /// The TLS session, if any (the handshake is driven from here).
    var tls: TLSStream? { transport.tls }
    /// The loop this session runs on. A strong `let`: read through `self`, it is borrowed, with no reference
    /// counting per use (an `unowned(unsafe)` reference is copied into a strong one, a retain and a release, each
    /// time it is used).
    let loop: EventLoop
    /// The engine that owns this session. Strong as ``loop``; the cycle with the owner's session table ends when
    /// the session closes and leaves the table.
    let owner: any SessionOwner
    /// `max_pending` in force: output holding more memory than this cuts a subscriber off. Read on every delivery;
    /// changed only by a reload, on the server queue, so `@exclusivity(unchecked)` as ``output`` is.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private(set) var maxPending: Int
    /// Incremental command parser reading straight from the socket.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var parser: CommandParser
    /// Ordered pending output. `@exclusivity(unchecked)`: touched only on the server queue, and never through two
    /// overlapping accesses; the runtime check cost a few percent of the fan-out hot path.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var output = OutputQueue()
    /// Where the connection is in its life. `@exclusivity(unchecked)` for the same reason as ``output``: read on
    /// every delivery and every command, only on the server queue, never through overlapping accesses.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private(set) var machine: ConnectionStateMachine
    /// What the commands know and change about the client: its name (`from=`), whether it authenticated, its user's
    /// rights, its failed HELLOs. Each command gets it `inout`. `@exclusivity(unchecked)` in every build, not only
    /// in release as the others: a command holds it inout while what it causes may read it (its own session cut off
    /// as a slow consumer during its own PUB tells `$SYS` its name); nothing writes it then.
    @exclusivity(unchecked)
    var client: ClientState
    /// True while the session waits in the loop's list of sessions to flush (at the end of the turn, or between two
    /// reads, ``EventLoop/flushEarly(reader:)``).
    /// `@exclusivity(unchecked)` as ``output``: read on every delivery.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var isDirty = false
    /// The loop's turn in which this session last read (``EventLoop/turn``): a session that read in this turn has
    /// replies queued and is always written at its end. `@exclusivity(unchecked)` as ``isDirty``.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var lastReadTurn: UInt64 = .max
    /// True while this session's write waits one more turn (``EventLoop/endOfTurn()``, a busy turn's small output).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var isHeldBack = false
    /// This session's publications to retained numbers that wait for the end-of-turn save of their values and are not
    /// answered yet (docs/STATE.md, "When a change is on disk"). While there are any, its next publications to
    /// retained numbers are staged too, and any other command waits in ``waitingCommand``.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var stagedValues = 0
    /// A command that came while ``stagedValues`` were waiting: it runs, and the commands behind it, once they are
    /// answered (``runWaitingCommand()``). Nothing is read or run meanwhile.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var waitingCommand: Result<Command, ProtocolError>? {
        didSet { hasWaitingCommand = waitingCommand != nil }
    }
    /// Whether ``waitingCommand`` holds one, kept beside it for the read loop's test before every command: reading the
    /// optional itself copies and destroys it there, through the runtime's enum-tag call (about 5% of an ingest).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private(set) var hasWaitingCommand = false
    /// Replies that wait for something in flight (a publication's confirmations from other cluster nodes), and those
    /// of the commands behind them: while any is held, every reply joins them, so replies keep command order.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private(set) var repliesInFlight = RepliesInFlight()
    /// Answers given later (``ServerEnvironment/answerLater(_:)``) not yet come: more than one while a command run
    /// again inside one waits for its own.
    var answersAwaited = 0
    /// A close the transport asked for (a WebSocket close frame) while replies were in flight: done once they are out.
    private var closeBehindReplies: TransportClose?
    /// The MQTT front, for a connection that speaks MQTT (an `mqtt://` listener's, or a WebSocket upgrade to the
    /// subprotocol `mqtt`); nil for the line protocol. Its packets run as commands through the same path; see
    /// `Session+MQTT.swift`.
    var mqtt: MQTTConnection?
    /// For an MQTT connection's ``waitingCommand``: the customer it runs for and the MQTT part of the publication it
    /// makes.
    var waitingMQTT: (customer: MQTTCustomer, message: MQTTMessage?)?
    /// When the connection was accepted (``MonotonicClock``).
    let connectedAt: UInt64
    /// When bytes last arrived, or reading last resumed after a pause (``MonotonicClock``).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private(set) var lastInputAt: UInt64
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private var readSource: DispatchSourceRead?
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private var writeSource: DispatchSourceWrite?
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private var liveSources = 0

    /// Read this much per read(2).
    private static let readSize = 65_536
    /// Reads per turn before the session lets other sessions run (it comes back by itself, see ``scheduleRead()``).
    private static let readsPerTurn = 4
    /// How long a graceful close may wait for the peer.
    static let closeDeadline = DispatchTimeInterval.seconds(5)

    init(
        id: UInt64, fd: Int32, isTCP: Bool, peerAddress: String, loop: EventLoop, owner: any SessionOwner,
        limits: ProtocolLimits, maxPending: Int, needsAuthentication: Bool, tls: TLSStream? = nil,
        webSocket: WebSocketTransport? = nil, mqtt: MQTTConnection? = nil
    ) {
        self.mqtt = mqtt
        self.id = id
        self.isTCP = isTCP
        self.transport = SessionTransport(fd: fd, tls: tls, webSocket: webSocket)
        self.peerAddress = peerAddress
        self.maxPending = maxPending
        self.machine = ConnectionStateMachine(marks: .init(maxPending: maxPending))
        self.loop = loop
        self.owner = owner
        self.parser = CommandParser(limits: limits)
        self.client = ClientState(isAuthenticated: !needsAuthentication)
        self.connectedAt = MonotonicClock.nanoseconds()
        self.lastInputAt = connectedAt
    }

    /// Puts reloaded limits in force from the next command on (a `PUB` whose header was already read keeps the
    /// payload limit it was checked against).
    func apply(limits: ProtocolLimits, maxPending: Int) {
        parser.limits = limits
        transport.apply(limits: limits)
        self.maxPending = maxPending
        machine.marks = .init(maxPending: maxPending)
    }

    /// What the liveness check needs to know.
    var livenessFacts: LivenessPolicy.Facts {
        LivenessPolicy.Facts(
            connectedAt: connectedAt, lastInputAt: lastInputAt,
            // A TLS handshake, a WebSocket upgrade or frame header not finished is a command not finished.
            hasPartialCommand: parser.bufferedByteCount > 0 || transport.holdsPartialInput
                || (mqtt?.decoder.bufferedByteCount ?? 0) > 0,
            isReading: machine.isReading, isAuthenticated: client.isAuthenticated)
    }

    /// Gives back the buffers an idle session does not need: the output's chunk list and reply buffer when nothing
    /// is queued, and the parser's storage when it holds no partial command. Called a few times a second.
    func releaseIdleMemory() {
        output.releaseIdleMemory()
        parser.releaseStorageIfEmpty()
        mqtt?.decoder.releaseStorageIfEmpty()
        transport.releaseIdleMemory()
    }

    /// Starts watching the socket.
    func start() {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: loop.queue)
        // Both handlers hold the session strongly (the descriptor must outlive every source watching it); the cycle
        // ends when ``tearDown()`` cancels the source. No weak reference to a session is ever made: weak references
        // move an object's reference counts to a slower side table, which every delivery would pay for.
        source.setEventHandler { self.handleReadable() }
        source.setCancelHandler { self.sourceCancelled() }
        liveSources += 1
        readSource = source
        source.resume()
    }

    // MARK: Customer

    /// Queues a publication's `MSG` frame (a range of the loop's frame log, or the shared frame: ``OutputQueue``). A
    /// subscriber whose output would then hold more than `max_pending` is cut off instead, and the message is not
    /// counted; nobody else waits for it. A subscriber with nothing queued always takes one message.
    func receive(_ publication: Publication, on number: String) -> Bool {
        guard machine.phase == .open else { return false }
        if !output.isEmpty && output.heldBytes + publication.heldBytes > maxPending {
            owner.sessionFellBehind(self)
            fail(.slowConsumer)
            return false
        }
        output.append(publication, log: &loop.frameLog, sharing: machine.isOutputHeld)
        if !isDirty { loop.markDirty(self) }
        return true
    }

    /// Held by the center until it is removed: the server removes a session from the center the moment it stops
    /// serving, so the center never needs a weak reference to it.
    var retention: CustomerRetention { .untilRemoved }

    /// A delivery through a queue group: the publication's frame marked `group=<name>` (one such frame per group
    /// per publication, as one member per group gets it).
    func receive(_ publication: Publication, on number: String, throughGroup group: String) -> Bool {
        receive(publication.delivered(throughGroup: group), on: number)
    }

    /// Queues a retained number's current value (on `SUB` and `GET`), as a delivery would be queued.
    func push(_ value: Publication) {
        _ = receive(value, on: value.number)
    }

    /// Queues a GONE push: a number this session was subscribed to exactly was removed.
    func numberRemoved(_ number: String) {
        guard machine.phase == .open else { return }
        appendReply { ReplyEncoder.gone(number, into: &$0) }
    }

    // MARK: Events from the server

    /// Queues a command's reply (after the pushes the command caused), behind the replies in flight if any.
    func queue(_ reply: Reply) {
        guard repliesInFlight.isEmpty else { return repliesInFlight.append(.success(reply)) }
        write(reply)
    }

    /// Puts a reply into the output (for an MQTT connection, what the reply's packet asked for).
    private func write(_ reply: Reply) {
        if let mqtt { return replied(.success(reply), mqtt) }
        if case .count(let count) = reply {
            // The reply to every PUB: written on the stack and copied once into the output.
            withUnsafeTemporaryAllocation(byteCount: ReplyEncoder.okCountMaxBytes, alignment: 8) { space in
                let written = ReplyEncoder.writeOkCount(count, to: space.baseAddress!)
                output.append(replyBytes: UnsafeRawBufferPointer(rebasing: space[..<written]))
            }
            if !isDirty { loop.markDirty(self) }
            return
        }
        loop.scratch.removeAll(keepingCapacity: true)
        reply.encode(into: &loop.scratch)
        loop.scratch.withUnsafeBytes { output.append(replyBytes: $0) }
        loop.markDirty(self)
    }

    /// Queues a command's `-ERR` reply, behind the replies in flight if any.
    func queueError(_ error: ProtocolError) {
        guard repliesInFlight.isEmpty else { return repliesInFlight.append(.failure(error)) }
        if let mqtt { return replied(.failure(error), mqtt) }
        appendReply { ReplyEncoder.error(error, into: &$0) }
    }

    /// The reply to the command running now comes later, and those of the commands behind it wait for it: its slot,
    /// for ``answer(_:with:)``. The session goes on reading and running commands meanwhile (the server decides which
    /// may run ahead).
    func replyLater() -> UInt64 {
        repliesInFlight.reserve()
    }

    /// Slot `slot`'s reply came: the replies now at the front go into the output, in order. Once none is left in
    /// flight, an end of input that waited for them is read again. Nothing once closed.
    func answer(_ slot: UInt64, with reply: Result<Reply, ProtocolError>) {
        guard machine.phase != .closed, repliesInFlight.fill(slot, with: reply) else { return }
        while let ready = repliesInFlight.takeReady() {
            switch ready {
            case .success(let reply): write(reply)
            case .failure(let error):
                if let mqtt {
                    replied(.failure(error), mqtt)
                } else {
                    appendReply { ReplyEncoder.error(error, into: &$0) }
                }
            }
        }
        guard repliesInFlight.isEmpty else { return }
        let actions = machine.repliesLanded()
        if !actions.isEmpty { perform(actions) }
        if let close = closeBehindReplies {
            closeBehindReplies = nil
            closeTransport(close)
        }
    }

    /// Encodes with the loop's scratch buffer and queues the bytes.
    func appendReply(_ encode: (inout [UInt8]) -> Void) {
        loop.scratch.removeAll(keepingCapacity: true)
        encode(&loop.scratch)
        loop.scratch.withUnsafeBytes { output.append(replyBytes: $0) }
        loop.markDirty(self)
    }

    /// Holds the session: no command runs, nothing is read and its output waits, until ``release(after:)`` (a
    /// `HELLO` whose secret is being checked, or a failed one sitting out its delay).
    func hold() {
        perform(machine.penaltyStarted())
    }

    /// Ends ``hold()`` after `seconds` (0: now): the held output goes out and the commands behind run, in order.
    func release(after seconds: Double = 0) {
        guard seconds > 0 else {
            perform(machine.penaltyEnded())
            return
        }
        loop.queue.asyncAfter(deadline: .now() + .nanoseconds(Int(seconds * 1_000_000_000))) {
            self.perform(self.machine.penaltyEnded())
            self.loop.endOfTurn()
        }
    }

    /// Stops taking commands and closes gracefully for `reason` (QUIT, a fatal protocol error): the replies so far
    /// are flushed first.
    func requestClose(_ reason: CloseReason) {
        perform(machine.closeRequested(reason))
    }

    /// A timeout expired: the client is told why, then the connection closes gracefully.
    func expire(_ expiry: LivenessPolicy.Expiry) {
        guard machine.phase == .open else { return }
        if let mqtt { return expireMQTT(mqtt, reason: expiry.reason) }
        // A client whose transport is not open yet is answered in its terms (a WebSocket upgrade: HTTP 408).
        if let answer = transport.answerToTimeout() { queueAsIs(answer) } else { queueError(expiry.error) }
        perform(machine.closeRequested(expiry.reason))
    }

    /// The daemon is stopping: close as soon as the output is out.
    func drain() {
        perform(machine.drain())
    }

    /// Closes now (a slow consumer, the drain deadline): no graceful part.
    func fail(_ reason: CloseReason) {
        perform(machine.failed(reason))
    }

    // MARK: Reading

    private func handleReadable() {
        switch machine.phase {
        case .open:
            if let tls, !tls.progress.isEstablished {
                continueHandshake(tls)
            } else {
                readCommands()
            }
        case .closing: discardInput()
        case .closed: break
        }
        loop.endOfTurn()
    }

    /// Reads and runs commands until the socket has nothing more (EAGAIN), ends (EOF) or fails. A short read is
    /// not the end: after a hang-up libdispatch reports the socket one last time and then stops watching it, so
    /// bytes and a reset that arrive together must both be read now, or the session would stay open for good.
    private func readCommands() {
        var reads = 0
        lastReadTurn = loop.turn
        while machine.isReading && !hasWaitingCommand {
            guard reads < Self.readsPerTurn else {
                // One busy client must not starve the others: come back after them.
                scheduleRead()
                return
            }
            // What the last read's commands queued goes out before the next read, where there is much of it
            // (``EventLoop/flushEarly(reader:)``): the receivers get to work on it while this one is parsed.
            if reads > 0 {
                loop.flushEarly(reader: self)
                // The write may have ended the session (an error, or the last output of a QUIT).
                guard machine.isReading else { return }
            }
            reads += 1
            // Borrow the loop's read buffer when nothing is buffered here; it goes back below once the commands
            // left nothing behind, so an idle session holds no read buffer.
            parser.exchangeStorage(with: &loop.readBuffer)
            defer { parser.exchangeStorage(with: &loop.readBuffer) }
            let result: IOResult
            do throws(SystemCallError) {
                if let mqtt {
                    result = try transport.read(into: &mqtt.decoder, readSize: Self.readSize)
                } else {
                    result = try transport.read(into: &parser, readSize: Self.readSize)
                }
            } catch {
                perform(machine.failed(.forError(error)))
                return
            }
            switch result {
            case .wouldBlock:
                if transport.inputWaitsForRoom { retryWhenWritable() }
                return
            case .processed(0):
                // Replies still in flight go out first: the end is read again once they have (``answer(_:with:)``).
                guard repliesInFlight.isEmpty else { return perform(machine.inputEndedBeforeReplies()) }
                perform(machine.inputEnded(outputIsEmpty: output.isEmpty))
                return
            case .processed(let n):
                loop.traffic.bytesIn += UInt64(n)
                lastInputAt = MonotonicClock.nanoseconds()
                var close: TransportClose?
                var queued = false
                func handle(_ input: SessionTransport.Input) {
                    switch input {
                    case .send(let bytes):
                        queueAsIs(bytes)
                        queued = true
                    case .close(let reason, let goodbye, let problem): close = (reason, goodbye, problem)
                    }
                }
                if let mqtt {
                    transport.takeInput(into: &mqtt.decoder, handle)
                } else if transport.takeInput(into: &parser, handle) {
                    // The upgrade was accepted: the subprotocol picks the front for the frames that follow.
                    if transport.subprotocol == WebSocketHandshake.mqttSubprotocol { mqtt = owner.makeMQTTFront() }
                    if let mqtt {
                        transport.takeInput(into: &mqtt.decoder, handle)
                    } else {
                        transport.takeInput(into: &parser, handle)
                    }
                }
                // What the transport queued (pongs) counts as a command's output: a client that only pings and never
                // reads is paused as one that only sends PING (its output is bounded by the pause mark).
                if queued {
                    let actions = machine.commandRan(outputHeld: output.heldBytes)
                    if !actions.isEmpty { perform(actions) }
                }
                // The commands that came before a close frame (or a bad one) in the same read run first, and its
                // goodbye goes out after their replies, as on TCP the bytes before a FIN are served.
                processCommands()
                if let close {
                    // Replies in flight go out before the goodbye too.
                    if repliesInFlight.isEmpty { closeTransport(close) } else { closeBehindReplies = close }
                }
            }
        }
    }

    /// How the transport asked to close: the reason, its last bytes, and the problem to report, if any.
    typealias TransportClose = (reason: CloseReason, goodbye: [UInt8], problem: String?)

    /// Closes as the transport asked, after the replies queued so far.
    private func closeTransport(_ close: TransportClose) {
        queueAsIs(close.goodbye)
        if let problem = close.problem { owner.sessionBrokeTransport(self, problem: problem) }
        requestClose(close.reason)
    }

    /// Queues bytes that are not the line protocol's (an HTTP response, a WebSocket control frame): they go out as
    /// they are, between the frames the transport cuts the output into.
    private func queueAsIs(_ bytes: [UInt8]) {
        guard machine.phase != .closed else { return }
        transport.queuedAsIs(count: bytes.count, behind: output.pendingBytes)
        bytes.withUnsafeBytes { output.append(replyBytes: $0) }
        loop.markDirty(self)
    }

    /// Drives the TLS handshake one step further; once it is done, the owner learns the client certificate's name
    /// (if any), output queued meanwhile is flushed, and reading starts (OpenSSL may already hold the first bytes).
    private func continueHandshake(_ tls: TLSStream) {
        switch tls.handshake() {
        case .done:
            owner.sessionEstablishedTLS(self, peerName: tls.peerCommonName)
            if machine.phase == .open {
                if !output.isEmpty { loop.markDirty(self) }
                readCommands()
            }
        case .wantRead:
            break  // the read source reports the peer's next flight
        case .wantWrite:
            retryWhenWritable()
        case .closed:
            perform(machine.inputEnded(outputIsEmpty: true))
        case .failed(let reason):
            owner.sessionFailedTLS(self, reason: reason)
            perform(machine.failed(.protocolError))
        }
    }

    /// A TLS handshake step or read needs room in the socket to send first (rare: the socket buffer of a new
    /// connection takes a whole handshake flight). The write source belongs to the output's flow control, so this
    /// polls instead: the read is retried shortly.
    private func retryWhenWritable() {
        guard !machine.isWaitingForRoom else { return }  // one retry at a time
        perform(machine.tlsInputBlocked())  // the read source would report unread input again and again
        loop.queue.asyncAfter(deadline: .now() + .milliseconds(5)) {
            self.perform(self.machine.tlsInputUnblocked())  // resumeReading: scheduleResume -> handleReadable
            self.loop.endOfTurn()
        }
    }

    /// Runs the complete commands in the buffer, in order, until the session's own output passes the pause mark:
    /// then reading stops, and the rest run once the output has drained (a 5-byte LIST can make a reply of
    /// megabytes, so the check is made after every command, not once per read).
    func processCommands() {
        if let mqtt { return processMQTT(mqtt) }
        var sinceFlush = 0
        while machine.isReading, !hasWaitingCommand, let result = parser.next() {
            handle(consume result)
            sinceFlush += 1
            if sinceFlush == Self.commandsPerEarlyFlush {
                sinceFlush = 0
                // Not once the command stopped reading (its output past the pause mark, a QUIT, a hold): the
                // output then goes out as the state machine says.
                if machine.isReading && !hasWaitingCommand { loop.flushAlone(self) }
            }
        }
    }

    /// A pipelining client whose commands queue output for nobody else gets its replies after this many of them,
    /// not only after the whole read (``EventLoop/flushAlone(_:)``). Each write costs the loop the socket's delivery
    /// (on loopback, the peer's side too), so fewer are better, as long as a client that waits for its `+OK`s gets
    /// some before its window runs out: with 1,000 publications in flight, 512 gave an ingest 1.19 times the rate of
    /// 128, and writing only after the whole read (one window's worth) 0.70 times.
    static let commandsPerEarlyFlush = 512

    /// Runs a parsed command, or answers a malformed one; then lets the state machine pause reading when the output
    /// grew past its mark. While values of this session wait for their save, or replies of it are in flight, the server
    /// decides which commands may run ahead (``Server/run(_:for:)``); the others, and any malformed line, wait in
    /// ``waitingCommand`` instead: their answer must follow those.
    private func handle(_ result: consuming Result<Command, ProtocolError>) {
        switch consume result {
        case .success(let command):
            if let waiting = waitingMQTT {
                waitingMQTT = nil
                owner.run(command, for: self, customer: waiting.customer, message: waiting.message)
            } else {
                owner.run(command, for: self)
            }
        case .failure(let parsed) where stagedValues > 0 || !repliesInFlight.isEmpty:
            waitingCommand = .failure(parsed)
            return
        case .failure(let parsed):
            loop.traffic.protocolErrors += 1
            let error = CommandPolicy.screen(parsed, verb: parser.failedVerb, for: client)
            queueError(error)
            if error.closesConnection {
                owner.sessionFailed(self, with: error)
                requestClose(.protocolError)
            }
        }
        let actions = machine.commandRan(outputHeld: output.heldBytes)
        if !actions.isEmpty { perform(actions) }
    }

    /// A command (or an MQTT packet) ran: the state machine pauses reading when the output grew past its mark.
    func commandRan() {
        let actions = machine.commandRan(outputHeld: output.heldBytes)
        if !actions.isEmpty { perform(actions) }
    }

    /// What a command waited for is answered (the values this session staged, its replies in flight, or room among
    /// those): the command that waited runs (the server may make it wait again), then the commands behind it, then
    /// reading goes on.
    func runWaitingCommand() {
        guard let waiting = waitingCommand else {
            // An MQTT connection may wait with a packet it could not start yet (behind replies in flight).
            if mqtt != nil, machine.phase == .open {
                processCommands()
                if !hasWaitingCommand { scheduleRead() }
            }
            return
        }
        waitingCommand = nil
        guard machine.phase == .open else { return }
        handle(waiting)
        processCommands()
        // Reading stopped while the command waited; bytes that came meanwhile may not be reported again.
        if !hasWaitingCommand { scheduleRead() }
    }

    /// While closing: read and drop what the peer still sends, until it closes.
    private func discardInput() {
        for _ in 0..<256 {
            let fd = self.fd
            let result: Result<IOResult, SystemCallError> = loop.discardBuffer.withUnsafeMutableBytes { buffer in
                do throws(SystemCallError) {
                    return .success(try Syscall.read(fd, buffer))
                } catch {
                    return .failure(error)
                }
            }
            switch result {
            case .failure(let error):
                perform(machine.failed(.forError(error)))
                return
            case .success(.processed(0)):
                perform(machine.inputEnded(outputIsEmpty: output.isEmpty && repliesInFlight.isEmpty))
                return
            case .success(.wouldBlock):
                return
            case .success(.processed):
                continue
            }
        }
        // A peer that sends without end: come back after the others.
        scheduleRead()
    }

    /// Reads again on a later turn of the queue, without waiting for the read source (which may not report again).
    private func scheduleRead() {
        loop.queue.async { self.handleReadable() }
    }

    /// Reading may go on (the output drained, a hold ended): on the loop's next step, never from the flush or the
    /// release that allowed it, the commands already buffered run first (no new bytes may ever come to wake the read
    /// source for them), then reading goes on (a hang-up reported while reading was paused may not be reported again).
    /// So no command runs inside another command or inside the end of a turn.
    private func scheduleResume() {
        loop.queue.async {
            if self.machine.phase == .open { self.processCommands() }
            self.handleReadable()
        }
    }

    // MARK: Writing

    /// Writes what is pending; the state machine then arms the write source if the socket is full. (Nothing queued
    /// waits for the saved state: a value's answer and frames are queued only once it is saved.) Called at the end of
    /// a turn, or between two reads of one (``EventLoop/flushEarly(reader:)``).
    func flush() {
        guard machine.phase != .closed, !machine.isOutputHeld else { return }
        // A closing session's transport may end with bytes of its own (a WebSocket close frame) after the last reply
        // (queued by now: a QUIT's reply comes after the QUIT asked to close, and nothing is queued once the close
        // is under way).
        if machine.phase == .closing, let reason = machine.closeReason, let goodbye = transport.goodbye(for: reason) {
            queueAsIs(goodbye)
        }
        do {
            // Nothing goes out before a TLS handshake is done; it flushes what waited.
            guard let written = try transport.write(&output, loop: loop) else {
                // Nothing can ever go out: a closing session (drain, timeout) has nothing left to wait for.
                if machine.phase == .closing { perform(machine.failed(.shutdown)) }
                return
            }
            loop.traffic.bytesOut += UInt64(written)
        } catch {
            perform(machine.failed(.forError(error)))
            return
        }
        wroteOutput()
    }

    /// After a write: the state machine learns what is left (it arms the write source when the socket is full, or
    /// resumes reading), and an MQTT client's session may have messages waiting for room in this output.
    private func wroteOutput() {
        perform(
            machine.flushed(
                outputIsEmpty: output.isEmpty, outputHeld: output.heldBytes, awaitingReplies: !repliesInFlight.isEmpty))
        if let mqtt, mqtt.client?.sendsQueued(to: self) == true { owner.mqttOutputDrained(self) }
    }

    /// True when a helper of the loop's ``FlushCrew`` may make this session's next write: an open plain socket (no
    /// TLS, whose `SSL_*` calls stay on the loop, no WebSocket framing), output not held.
    var writesWithCrew: Bool {
        transport.tls == nil && transport.webSocket == nil && machine.phase == .open && !machine.isOutputHeld
    }

    /// A write made by the loop's ``FlushCrew`` came back: what went out is released, and the rest is as at the end
    /// of ``flush()`` (the rest written, the write source armed when the socket is full, a failed socket closed).
    func finishWrite(_ outcome: FlushCrew.WriteOutcome) {
        // Closed meanwhile (by the finish of a session before it in the list): its output is gone with it.
        guard machine.phase != .closed else { return }
        switch outcome {
        case .wrote(let written, let offered):
            output.wrote(written, of: offered)
            loop.traffic.bytesOut += UInt64(written)
            // More than one writev's worth, or output queued after the write (by a session finished before this
            // one): the rest goes out now, as flush() would have written it.
            if written == offered && !output.isEmpty { return flush() }
        case .full:
            output.socketFull()
        case .failed(let errno):
            perform(machine.failed(.forError(SystemCallError("writev", errno: errno))))
            return
        }
        wroteOutput()
    }

    private func armWriteSource() {
        if writeSource == nil {
            let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: loop.queue)
            source.setEventHandler {
                self.flush()
                self.loop.endOfTurn()
            }
            source.setCancelHandler { self.sourceCancelled() }
            liveSources += 1
            writeSource = source
        }
        writeSource?.resume()
    }

    // MARK: Actions

    func perform(_ outcome: ConnectionStateMachine.Outcome) {
        switch outcome {
        case .proceed(let actions): perform(actions)
        case .close(let reason): owner.sessionClosed(self, reason: reason)
        }
    }

    func perform(_ actions: ConnectionStateMachine.Actions) {
        if actions.contains(.stopServing) { owner.sessionStoppedServing(self) }
        if actions.contains(.startCloseDeadline) {
            loop.queue.asyncAfter(deadline: .now() + Self.closeDeadline) {
                self.perform(self.machine.closeDeadlinePassed())
                self.loop.endOfTurn()
            }
        }
        if actions.contains(.pauseReading) { readSource?.suspend() }
        if actions.contains(.armWriteSource) { armWriteSource() }
        if actions.contains(.disarmWriteSource) { writeSource?.suspend() }
        if actions.contains(.shutDownOutput) {
            transport.shutdownWrite()
        }
        if actions.contains(.flush) { loop.markDirty(self) }
        if actions.contains(.resumeReading) {
            readSource?.resume()
            lastInputAt = MonotonicClock.nanoseconds()
            scheduleResume()
        }
    }

    // MARK: Closing

    /// Releases everything at once: sources cancelled, output dropped; the descriptor closes in the cancel handler.
    /// Only the owner calls this, once the state machine said close (it also removes the session from its table
    /// and the center).
    func tearDown() {
        output.removeAll()
        parser = CommandParser(limits: parser.limits)
        // A suspended source must be resumed before it is cancelled.
        if let source = readSource {
            if machine.isReadSourceSuspended { source.resume() }
            source.cancel()
        }
        if let source = writeSource {
            if !machine.isWriteArmed { source.resume() }
            source.cancel()
        }
        readSource = nil
        writeSource = nil
        if liveSources == 0 { Syscall.close(fd) }
    }

    private func sourceCancelled() {
        liveSources -= 1
        if liveSources == 0 && machine.phase == .closed { Syscall.close(fd) }
    }
}
