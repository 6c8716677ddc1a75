import Dispatch
import SubscriptionSystem

#if canImport(Glibc)
    import Glibc
#endif

/// One connection to the metrics endpoint: one request head read, one response written, then closed.
///
/// It runs on the server's queue, watched by a Dispatch read source (and a write source only while the socket is
/// full). The whole exchange has a deadline, counted from the accept: a client that has not sent its head by then
/// is told 408 and closed; one that does not read its response is closed. After the response the write side is
/// shut down and the input read and dropped until the client closes, so an unread byte cannot make the kernel
/// reset the connection and destroy the response. `@unchecked Sendable`: confined to the queue.
final class MetricsConnection: @unchecked Sendable {
    /// Where the exchange is.
    private enum Phase {
        /// Reading the request head.
        case reading
        /// Writing the response.
        case writing
        /// The response is out and the write side shut down; waiting for the client to close.
        case finishing
        /// Closed; the descriptor is released once every source is cancelled.
        case closed
    }

    /// The listener's id for it.
    let id: UInt64
    private let fd: Int32
    private let queue: DispatchQueue
    private var parser: HTTPRequestHeadParser
    private var phase = Phase.reading
    /// True once the client closed its side (EOF).
    private var inputEnded = false
    /// The response not written yet: the sessions' write state, written by the sessions' ``OutputWriter``.
    private var output = OutputQueue()
    private var readSource: DispatchSourceRead?
    private var writeSource: DispatchSourceWrite?
    private var deadlineTimer: DispatchSourceTimer?
    private var liveSources = 0
    /// Makes the response to a complete head.
    private let respond: (HTTPRequestHead) -> HTTPResponse
    /// Tells the listener that the connection closed.
    private let onClose: (MetricsConnection) -> Void

    /// Reads most this much per read(2).
    private static let readSize = 4096
    /// Reads per turn, so a client that sends without end cannot hold the queue.
    private static let readsPerTurn = 16

    /// A connection on the accepted, non-blocking `fd`; nothing happens until ``start(deadline:)``.
    init(
        id: UInt64, fd: Int32, queue: DispatchQueue, maxHeadBytes: Int,
        respond: @escaping (HTTPRequestHead) -> HTTPResponse, onClose: @escaping (MetricsConnection) -> Void
    ) {
        self.id = id
        self.fd = fd
        self.queue = queue
        self.parser = HTTPRequestHeadParser(maxHeadBytes: maxHeadBytes)
        self.respond = respond
        self.onClose = onClose
    }

    /// Starts reading, with the whole exchange due within `deadline`.
    func start(deadline: DispatchTimeInterval) {
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        // The handlers hold the connection until ``close()`` cancels the sources.
        source.setEventHandler { self.handleReadable() }
        source.setCancelHandler { self.sourceCancelled() }
        liveSources += 1
        readSource = source
        source.resume()

        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + deadline)
        timer.setEventHandler { self.deadlinePassed() }
        deadlineTimer = timer
        timer.resume()
    }

    /// Closes now: sources cancelled, the descriptor released once they are, the listener told.
    func close() {
        guard phase != .closed else { return }
        phase = .closed
        deadlineTimer?.cancel()
        deadlineTimer = nil
        readSource?.cancel()
        readSource = nil
        writeSource?.cancel()
        writeSource = nil
        output.removeAll()
        if liveSources == 0 { Syscall.close(fd) }
        onClose(self)
    }

    // MARK: Reading

    private func handleReadable() {
        for _ in 0..<Self.readsPerTurn {
            guard phase != .closed, !inputEnded else { return }
            let result: Result<IOResult, SystemCallError> = withUnsafeTemporaryAllocation(
                byteCount: Self.readSize, alignment: 1
            ) { buffer in
                do throws(SystemCallError) {
                    let result = try Syscall.read(fd, buffer)
                    if case .processed(let count) = result, count > 0, phase == .reading {
                        take(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                    }
                    return .success(result)
                } catch {
                    return .failure(error)
                }
            }
            switch result {
            case .failure:
                return close()
            case .success(.wouldBlock):
                return
            case .success(.processed(0)):
                return inputEnd()
            case .success(.processed):
                continue
            }
        }
    }

    /// Feeds the parser; a head that ended (well or not) is answered.
    private func take(_ bytes: UnsafeRawBufferPointer) {
        switch parser.consume(bytes) {
        case .needMore: return
        case .complete(let head): send(respond(head))
        case .failed(let error): send(MetricsRoute.response(to: error))
        }
    }

    /// The client closed its side: before a whole head there is nothing to answer; once the response is out there
    /// is nothing left to wait for; while it is written, reading stops (a socket at EOF stays readable) and the
    /// connection closes when the response is out.
    private func inputEnd() {
        inputEnded = true
        switch phase {
        case .reading, .finishing: close()
        case .writing:
            readSource?.cancel()
            readSource = nil
        case .closed: break
        }
    }

    // MARK: Writing

    private func send(_ response: HTTPResponse) {
        phase = .writing
        response.encoded().withUnsafeBytes { output.append(replyBytes: $0) }
        flush()
    }

    /// Writes what is left of the response; arms the write source while the socket is full.
    private func flush() {
        guard phase == .writing else { return }
        do {
            // The response is one run of own bytes: one iovec, nothing to gather (no scratch).
            _ = try withUnsafeTemporaryAllocation(of: iovec.self, capacity: 1) { vectors throws(SystemCallError) in
                try OutputWriter.write(
                    &output, to: fd, vectors: vectors.baseAddress!, maxVectors: 1,
                    scratch: UnsafeMutableRawBufferPointer(start: nil, count: 0))
            }
        } catch {
            return close()
        }
        guard output.isEmpty else { return armWriteSource() }
        writeSource?.cancel()
        writeSource = nil
        guard !inputEnded else { return close() }
        Syscall.shutdownWrite(fd)
        phase = .finishing
    }

    private func armWriteSource() {
        guard writeSource == nil else { return }
        let source = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { self.flush() }
        source.setCancelHandler { self.sourceCancelled() }
        liveSources += 1
        writeSource = source
        source.resume()
    }

    // MARK: Deadline

    /// The exchange took too long: a client still sending its head is told 408 (one try, not waited for).
    private func deadlinePassed() {
        if phase == .reading {
            let bytes = MetricsRoute.timeout.encoded()
            _ = bytes.withUnsafeBytes { try? Syscall.send(fd, $0) }
            Syscall.shutdownWrite(fd)
        }
        close()
    }

    private func sourceCancelled() {
        liveSources -= 1
        if liveSources == 0 && phase == .closed { Syscall.close(fd) }
    }
}
