#if canImport(Glibc)
import Glibc
#endif
import CSubdShim
import Dispatch
import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionSystem

/// One client connection: its socket, parser, output queue and Dispatch sources, driven by a
/// ``ConnectionStateMachine``.
///
/// A session is a ``Customer`` of the center, held there weakly; it lives in the server's session table until it
/// closes, and every method runs on the server's queue. The state machine decides; this class performs its actions
/// on the socket. Closing is graceful where the protocol allows: the reply is flushed, the write side is shut down,
/// and the input is drained until the peer closes (so the kernel does not reset the connection and destroy the
/// reply), with a deadline. `@unchecked Sendable`: confined to that queue.
final class Session: Customer, @unchecked Sendable {
    typealias Message = Frame

    /// The session id shown in HELLO's reply.
    let id: UInt64
    /// The socket.
    let fd: Int32
    /// True for a TCP connection (keepalive applies), false for a Unix socket.
    let isTCP: Bool
    /// The engine that owns this session. `unowned(unsafe)`: the server outlives every session (it tears them all
    /// down before it could go), and a checked reference would cost two atomic operations per delivery.
    unowned(unsafe) let server: Server
    /// `max_pending` in force: output holding more memory than this cuts a subscriber off. Read on every delivery;
    /// changed only by a reload, on the server queue, so `@exclusivity(unchecked)` as ``output`` is.
    @exclusivity(unchecked) private(set) var maxPending: Int
    /// Incremental command parser reading straight from the socket.
    var parser: CommandParser
    /// Ordered pending output. `@exclusivity(unchecked)`: touched only on the server queue, and never through two
    /// overlapping accesses; the runtime check cost a few percent of the fan-out hot path.
    @exclusivity(unchecked) var output = OutputQueue()
    /// Where the connection is in its life. `@exclusivity(unchecked)` for the same reason as ``output``: read on
    /// every delivery and every command, only on the server queue, never through overlapping accesses.
    @exclusivity(unchecked) private(set) var machine: ConnectionStateMachine
    /// The name given with HELLO, sent as `from=` on its publishes.
    var name: String?
    /// True once HELLO presented the right token (or when no token is configured).
    var isAuthenticated: Bool
    /// True while the session waits in the server's list of sessions to flush at the end of the turn.
    var isDirty = false
    /// When the connection was accepted (``MonotonicClock``).
    let connectedAt: UInt64
    /// When bytes last arrived, or reading last resumed after a pause (``MonotonicClock``).
    private(set) var lastInputAt: UInt64
    private var readSource: DispatchSourceRead?
    private var writeSource: DispatchSourceWrite?
    private var liveSources = 0

    /// Read this much per read(2).
    private static let readSize = 65_536
    /// Reads per turn before the session lets other sessions run (it comes back by itself, see ``scheduleRead()``).
    private static let readsPerTurn = 4
    /// How long a graceful close may wait for the peer.
    static let closeDeadline = DispatchTimeInterval.seconds(5)

    init(
        id: UInt64, fd: Int32, isTCP: Bool, server: Server, limits: ProtocolLimits, maxPending: Int,
        needsAuthentication: Bool
    ) {
        self.id = id
        self.fd = fd
        self.isTCP = isTCP
        self.maxPending = maxPending
        self.machine = ConnectionStateMachine(marks: .init(maxPending: maxPending))
        self.server = server
        self.parser = CommandParser(limits: limits)
        self.isAuthenticated = !needsAuthentication
        self.connectedAt = MonotonicClock.now()
        self.lastInputAt = connectedAt
    }

    /// Puts reloaded limits in force from the next command on (a `PUB` whose header was already read keeps the
    /// payload limit it was checked against).
    func apply(limits: ProtocolLimits, maxPending: Int) {
        parser.limits = limits
        self.maxPending = maxPending
        machine.marks = .init(maxPending: maxPending)
    }

    /// What the liveness check needs to know.
    var livenessFacts: LivenessPolicy.Facts {
        LivenessPolicy.Facts(
            connectedAt: connectedAt, lastInputAt: lastInputAt, hasPartialCommand: parser.bufferedByteCount > 0,
            isReading: machine.isReading, isAuthenticated: isAuthenticated)
    }

    /// Starts watching the socket.
    func start(on queue: DispatchQueue) {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in self?.handleReadable() }
        // The cancel handler holds the session strongly: the descriptor must outlive every source watching it.
        source.setCancelHandler { self.sourceCancelled() }
        liveSources += 1
        readSource = source
        source.resume()
    }

    // MARK: Customer

    /// Queues a shared message frame. A subscriber whose output would then hold more than `max_pending` is cut off
    /// instead, and the message is not counted; nobody else waits for it. A subscriber with nothing queued always
    /// takes one message.
    func receive(_ frame: Frame, on number: String) -> Bool {
        guard machine.phase == .open else { return false }
        if !output.isEmpty && output.heldBytes + frame.heldBytes > maxPending {
            server.cutSlowConsumer(self)
            return false
        }
        output.append(frame: frame)
        if !isDirty { server.markDirty(self) }
        return true
    }

    /// Queues a GONE push.
    func sendGone(_ number: String) {
        guard machine.phase == .open else { return }
        appendReply { ReplyEncoder.gone(number, into: &$0) }
    }

    // MARK: Events from the server

    /// Encodes a reply with the server's scratch buffer and queues it.
    func appendReply(_ encode: (inout [UInt8]) -> Void) {
        server.scratch.removeAll(keepingCapacity: true)
        encode(&server.scratch)
        server.scratch.withUnsafeBytes { output.append(replyBytes: $0) }
        server.markDirty(self)
    }

    /// Stops taking commands and closes gracefully for `reason` (QUIT, a fatal protocol error): the replies so far
    /// are flushed first.
    func requestClose(_ reason: CloseReason) {
        perform(machine.closeRequested(reason))
    }

    /// A timeout expired: the client is told why, then the connection closes gracefully.
    func expire(_ expiry: LivenessPolicy.Expiry) {
        guard machine.phase == .open else { return }
        appendReply { ReplyEncoder.error(expiry.error, into: &$0) }
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
        case .open: readCommands()
        case .closing: discardInput()
        case .closed: break
        }
        server.endOfTurn()
    }

    /// Reads and runs commands until the socket has nothing more (EAGAIN), ends (EOF) or fails. A short read is
    /// not the end: after a hang-up libdispatch reports the socket one last time and then stops watching it, so
    /// bytes and a reset that arrive together must both be read now, or the session would stay open for good.
    private func readCommands() {
        var reads = 0
        while machine.isReading {
            guard reads < Self.readsPerTurn else {
                // One busy client must not starve the others: come back after them.
                scheduleRead()
                return
            }
            reads += 1
            var outcome: Result<IOResult, SystemCallError> = .success(.wouldBlock)
            let fd = self.fd
            parser.withWritableTail(minimumCapacity: Self.readSize) { space in
                do throws(SystemCallError) {
                    let result = try Syscall.read(fd, space)
                    outcome = .success(result)
                    if case .processed(let n) = result { return n }
                } catch {
                    outcome = .failure(error)
                }
                return 0
            }
            switch outcome {
            case .failure(let error):
                perform(machine.failed(.forError(error)))
                return
            case .success(.wouldBlock):
                return
            case .success(.processed(0)):
                perform(machine.inputEnded(outputIsEmpty: output.isEmpty))
                return
            case .success(.processed(let n)):
                server.stats.bytesIn += UInt64(n)
                lastInputAt = MonotonicClock.now()
                processCommands()
            }
        }
    }

    /// Runs the complete commands in the buffer, in order, until the session's own output passes the pause mark:
    /// then reading stops, and the rest run once the output has drained (a 5-byte LIST can make a reply of
    /// megabytes, so the check is made after every command, not once per read).
    private func processCommands() {
        while machine.isReading, let result = parser.next() {
            switch result {
            case .success(let command):
                server.handle(command, from: self)
            case .failure(let error):
                server.stats.protocolErrors += 1
                appendReply { ReplyEncoder.error(error, into: &$0) }
                if error.closesConnection {
                    server.logger.debug(
                        "closing session after error", metadata: ["session": "\(id)", "error": "\(error.code.rawValue)"])
                    requestClose(.protocolError)
                }
            }
            let actions = machine.commandRan(outputHeld: output.heldBytes)
            if !actions.isEmpty { perform(actions) }
        }
    }

    /// While closing: read and drop what the peer still sends, until it closes.
    private func discardInput() {
        for _ in 0..<256 {
            let fd = self.fd
            let result: Result<IOResult, SystemCallError> = server.discardBuffer.withUnsafeMutableBytes { buffer in
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
                perform(machine.inputEnded(outputIsEmpty: output.isEmpty))
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
        server.queue.async { [weak self] in self?.handleReadable() }
    }

    // MARK: Writing

    /// Writes what is pending; the state machine then arms the write source if the socket is full. Called once per
    /// turn.
    func flush() {
        guard machine.phase != .closed else { return }
        do {
            let written = try output.write(to: fd, vectors: server.vectors, maxVectors: server.maxVectors)
            server.stats.bytesOut += UInt64(written)
        } catch {
            perform(machine.failed(.forError(error)))
            return
        }
        perform(machine.flushed(outputIsEmpty: output.isEmpty, outputHeld: output.heldBytes))
    }

    private func armWriteSource() {
        if writeSource == nil {
            let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: server.queue)
            source.setEventHandler { [weak self] in
                guard let self else { return }
                self.flush()
                self.server.endOfTurn()
            }
            source.setCancelHandler { self.sourceCancelled() }
            liveSources += 1
            writeSource = source
        }
        writeSource?.resume()
    }

    // MARK: Actions

    private func perform(_ outcome: ConnectionStateMachine.Outcome) {
        switch outcome {
        case .proceed(let actions): perform(actions)
        case .close(let reason): server.close(self, reason: reason)
        }
    }

    private func perform(_ actions: ConnectionStateMachine.Actions) {
        if actions.contains(.stopServing) { server.sessionStoppedServing(self) }
        if actions.contains(.startCloseDeadline) {
            server.queue.asyncAfter(deadline: .now() + Self.closeDeadline) { [weak self] in
                guard let self else { return }
                self.perform(self.machine.closeDeadlinePassed())
            }
        }
        if actions.contains(.pauseReading) { readSource?.suspend() }
        if actions.contains(.armWriteSource) { armWriteSource() }
        if actions.contains(.disarmWriteSource) { writeSource?.suspend() }
        if actions.contains(.shutDownOutput) { shutdown(fd, Int32(SHUT_WR)) }
        if actions.contains(.flush) { server.markDirty(self) }
        if actions.contains(.resumeReading) {
            readSource?.resume()
            lastInputAt = MonotonicClock.now()
            if machine.phase == .open {
                // Commands already buffered run now: no new bytes may ever come to wake the read source for them.
                processCommands()
                perform(machine.bufferedCommandsRan())
            }
            // A hang-up reported while reading was paused may not be reported again: read on.
            scheduleRead()
        }
    }

    // MARK: Closing

    /// Releases everything at once: sources cancelled, output dropped; the descriptor closes in the cancel handler.
    /// Only the server calls this, once the state machine said close (it also removes the session from its table
    /// and the center).
    func tearDown() {
        output.removeAll()
        // A suspended source must be resumed before it is cancelled.
        if let source = readSource {
            if machine.isReadingPaused { source.resume() }
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
