#if canImport(Glibc)
import Glibc
#endif
import CSubdShim
import Dispatch
import SubscriptionCenter
import SubscriptionProtocol

/// One client connection: its socket, parser, output queue and Dispatch sources.
///
/// A session is a ``Customer`` of the center, held there weakly; it lives in the server's session table until it
/// closes, and every method runs on the server's queue. Closing is graceful where the protocol allows: the reply is
/// flushed, the write side is shut down, and the input is drained until the peer closes (so the kernel does not
/// reset the connection and destroy the reply), with a deadline. `@unchecked Sendable`: confined to that queue.
final class Session: Customer, @unchecked Sendable {
    typealias Message = Frame

    /// Where the session is in its life.
    enum State: Equatable {
        /// Reading and answering commands.
        case open
        /// No more commands; flushing output, then shutting down and waiting for the peer's close.
        case closing
        /// The descriptor is being released; nothing more happens.
        case closed
    }

    /// The session id shown in HELLO's reply.
    let id: UInt64
    /// The socket.
    let fd: Int32
    /// The engine that owns this session. `unowned(unsafe)`: the server outlives every session (it tears them all
    /// down before it could go), and a checked reference would cost two atomic operations per delivery.
    unowned(unsafe) let server: Server
    /// `max_pending` in force: output past it cuts a subscriber off. Read on every delivery; changed only by a reload,
    /// on the server queue, so `@exclusivity(unchecked)` as ``output`` is.
    @exclusivity(unchecked) private(set) var maxPending: Int
    /// Incremental command parser reading straight from the socket.
    var parser: CommandParser
    /// Ordered pending output. `@exclusivity(unchecked)`: touched only on the server queue, and never through two
    /// overlapping accesses; the runtime check cost a few percent of the fan-out hot path.
    @exclusivity(unchecked) var output = OutputQueue()
    /// The name given with HELLO, sent as `from=` on its publishes.
    var name: String?
    /// True once HELLO presented the right token (or when no token is configured).
    var isAuthenticated: Bool
    /// Where the session is in its life.
    private(set) var state = State.open
    /// True while the session waits in the server's list of sessions to flush at the end of the turn.
    var isDirty = false
    /// True when the peer closed its side.
    private var peerClosed = false
    /// True when reading is paused because the session's own output is backed up.
    private var readPaused = false
    private var readSource: DispatchSourceRead?
    private var writeSource: DispatchSourceWrite?
    private var writeSourceRunning = false
    private var liveSources = 0

    /// Read this much per read(2).
    private static let readSize = 65_536
    /// Stop reading a session's commands while its own output holds more than this (backpressure): 4 MiB, or half
    /// of `max_pending` when that is smaller, so a client's own replies alone never get it cut off.
    private var pauseReadingAbove: Int
    /// ...and read again once it is below this.
    private var resumeReadingBelow: Int { pauseReadingAbove / 4 }

    init(id: UInt64, fd: Int32, server: Server, limits: ProtocolLimits, maxPending: Int, needsAuthentication: Bool) {
        self.id = id
        self.maxPending = maxPending
        self.pauseReadingAbove = Self.pauseThreshold(maxPending: maxPending)
        self.fd = fd
        self.server = server
        self.parser = CommandParser(limits: limits)
        self.isAuthenticated = !needsAuthentication
    }

    /// Puts reloaded limits in force from the next command on (a `PUB` whose header was already read keeps the
    /// payload limit it was checked against).
    func apply(limits: ProtocolLimits, maxPending: Int) {
        parser.limits = limits
        self.maxPending = maxPending
        pauseReadingAbove = Self.pauseThreshold(maxPending: maxPending)
    }

    private static func pauseThreshold(maxPending: Int) -> Int {
        min(4 << 20, maxPending / 2)
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

    /// Queues a shared message frame. A subscriber whose pending output would pass `max_pending` is cut off
    /// instead, and the message is not counted; nobody else waits for it.
    func receive(_ frame: Frame, on number: String) -> Bool {
        guard state == .open else { return false }
        if output.pendingBytes + frame.count > maxPending {
            server.cutSlowConsumer(self)
            return false
        }
        output.append(frame: frame)
        if !isDirty { server.markDirty(self) }
        return true
    }

    /// Queues a GONE push.
    func sendGone(_ number: String) {
        guard state == .open else { return }
        appendReply { ReplyEncoder.gone(number, into: &$0) }
    }

    // MARK: Reading

    private func handleReadable() {
        switch state {
        case .open: readCommands()
        case .closing: discardInput()
        case .closed: break
        }
        server.endOfTurn()
    }

    private func readCommands() {
        // A few reads per turn, so one busy client cannot starve the others.
        for _ in 0..<4 {
            guard state == .open, !readPaused else { return }
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
                server.close(self, reason: "\(error)")
                return
            case .success(.wouldBlock):
                return
            case .success(.processed(0)):
                peerClosed = true
                processCommands()
                // Paused with commands left: they run, and the session closes, once its output drains.
                if !readPaused { closeGracefully() }
                return
            case .success(.processed(let n)):
                server.stats.bytesIn += UInt64(n)
                processCommands()
                if n < Self.readSize { return }
            }
        }
    }

    /// Runs the complete commands in the buffer, in order, until the session's own output passes the pause mark:
    /// then reading stops, and the rest run once the output has drained (a 5-byte LIST can make a reply of
    /// megabytes, so the check is made after every command, not once per read).
    private func processCommands() {
        while state == .open, !readPaused, let result = parser.next() {
            switch result {
            case .success(let command):
                server.handle(command, from: self)
            case .failure(let error):
                server.stats.protocolErrors += 1
                appendReply { ReplyEncoder.error(error, into: &$0) }
                if error.closesConnection {
                    server.logger.debug("closing session after error", metadata: ["session": "\(id)", "error": "\(error.code.rawValue)"])
                    closeGracefully()
                }
            }
            if state == .open && output.pendingBytes > pauseReadingAbove {
                readPaused = true
                readSource?.suspend()
            }
        }
    }

    /// Encodes a reply with the server's scratch buffer and queues it.
    func appendReply(_ encode: (inout [UInt8]) -> Void) {
        server.scratch.removeAll(keepingCapacity: true)
        encode(&server.scratch)
        server.scratch.withUnsafeBytes { output.append(replyBytes: $0) }
        server.markDirty(self)
    }

    /// After the reply went out: read and drop what the peer still sends, until it closes.
    ///
    /// Reads until the socket is empty rather than a few reads per event: once both directions are shut, epoll
    /// reports HUP and libdispatch does not call the handler again, so data left behind would hold the session
    /// until its close deadline. The cap only stops a peer that sends without end from holding the queue.
    private func discardInput() {
        for _ in 0..<256 {
            let result = server.discardBuffer.withUnsafeMutableBytes { try? Syscall.read(fd, $0) }
            switch result {
            case .processed(0)?, nil:
                peerClosed = true
                if output.isEmpty { server.close(self, reason: "closed") }
                return
            case .wouldBlock?:
                return
            case .processed?:
                continue
            }
        }
    }

    // MARK: Writing

    /// Writes what is pending; arms the write source if the socket is full. Called once per turn.
    func flush() {
        guard state != .closed else { return }
        do {
            let written = try output.write(to: fd, vectors: server.vectors, maxVectors: server.maxVectors)
            server.stats.bytesOut += UInt64(written)
        } catch {
            server.close(self, reason: "\(error)")
            return
        }
        if output.isEmpty {
            if writeSourceRunning {
                writeSourceRunning = false
                writeSource?.suspend()
            }
            if state == .closing { finishClosing() }
        } else if !writeSourceRunning {
            startWriteSource()
        }
        if readPaused && output.pendingBytes < resumeReadingBelow && state == .open {
            readPaused = false
            readSource?.resume()
            // Commands already buffered run now: no new bytes may ever come to wake the read source for them.
            processCommands()
            if peerClosed && !readPaused { closeGracefully() }
        }
    }

    private func startWriteSource() {
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
        writeSourceRunning = true
        writeSource?.resume()
    }

    // MARK: Closing

    /// Stops taking commands, leaves the center, flushes, then shuts the write side and waits for the peer.
    func closeGracefully() {
        guard state == .open else { return }
        state = .closing
        server.sessionStoppedServing(self)
        if readPaused {
            readPaused = false
            readSource?.resume()
        }
        server.markDirty(self)
        server.queue.asyncAfter(deadline: .now() + .seconds(5)) { [weak self] in
            guard let self, self.state == .closing else { return }
            self.server.close(self, reason: "close deadline passed")
        }
    }

    /// Output is all out: tell the peer we are done writing; close now if it is done too.
    private func finishClosing() {
        // While the daemon drains, nobody waits for slow peers: the output is out, so close.
        if peerClosed || server.isDraining {
            server.close(self, reason: "closed")
        } else {
            shutdown(fd, Int32(SHUT_WR))
        }
    }

    /// Releases everything at once: sources cancelled, output dropped; the descriptor closes in the cancel handler.
    /// Only the server calls this (it also removes the session from its table and the center).
    func tearDown() {
        guard state != .closed else { return }
        state = .closed
        output.removeAll()
        if let source = readSource {
            if readPaused { source.resume() }
            source.cancel()
        }
        if let source = writeSource {
            if !writeSourceRunning { source.resume() }
            source.cancel()
        }
        readSource = nil
        writeSource = nil
        if liveSources == 0 { Syscall.close(fd) }
    }

    private func sourceCancelled() {
        liveSources -= 1
        if liveSources == 0 && state == .closed { Syscall.close(fd) }
    }
}
