import Dispatch
import SubscriptionSystem

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension NATSClient {
    // MARK: Connecting

    /// Starts attempt `attempt` on `server`: the connect timeout, the name lookup (off the queue for a host name),
    /// then a non-blocking connect to each address in turn.
    func openSocket(to server: NATSServerAddress, attempt: UInt64) {
        queue.asyncAfter(deadline: .now() + Self.interval(options.connectTimeout)) { [self] in
            perform(machine.connectTimedOut(attempt: attempt, now: MonotonicClock.nanoseconds()))
        }
        if AddressResolver.isNumeric(server.host) {
            connect(server, attempt: attempt, AddressResolver.resolve(host: server.host, port: server.port))
        } else {
            DispatchQueue.global().async { [self] in
                let addresses = AddressResolver.resolve(host: server.host, port: server.port)
                queue.async { [self] in connect(server, attempt: attempt, addresses) }
            }
        }
    }

    private func connect(_ server: NATSServerAddress, attempt: UInt64, _ resolved: Result<[ResolvedAddress], NATSError>)
    {
        // A lookup that comes back after its attempt ended (timed out, closed) is dropped.
        guard machine.phase == .connecting, machine.attempt == attempt, socket == nil else { return }
        switch resolved {
        case .failure(let error):
            perform(machine.socketFailed(error, now: MonotonicClock.nanoseconds()))
        case .success(let addresses):
            connect(server, addresses[...], lastError: nil)
        }
    }

    /// Connects to the first of `addresses`; on failure, to the next; when none is left, the attempt failed.
    private func connect(_ server: NATSServerAddress, _ addresses: ArraySlice<ResolvedAddress>, lastError: String?) {
        guard var address = addresses.first else {
            let error = NATSError.connectionFailed(server: server.description, reason: lastError ?? "no address")
            perform(machine.socketFailed(error, now: MonotonicClock.nanoseconds()))
            return
        }
        let rest = addresses.dropFirst()
        var fd: Int32 = -1
        do throws(SystemCallError) {
            fd = try Syscall.streamSocket(family: address.family)
            try Syscall.setNonBlocking(fd)
            let length = address.length
            // The sockaddr_storage holds a sockaddr_in or sockaddr_in6 of `length` bytes (AddressResolver); the
            // pointer is used for the connect(2) call only.
            let result = try withUnsafePointer(to: &address.storage) { pointer throws(SystemCallError) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw throws(SystemCallError) in
                    try Syscall.connect(fd, raw, length)
                }
            }
            let socket = NATSSocket(fd: fd, server: server)
            self.socket = socket
            let writer = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
            writer.setEventHandler { [self] in socketWritable(socket, rest: rest) }
            writer.setCancelHandler { socket.sourceCancelled() }
            socket.adopt(write: writer)
            writer.resume()
            if result == .connected { established(socket) }
        } catch {
            if fd >= 0 { Syscall.close(fd) }
            connect(server, rest, lastError: error.reason)
        }
    }

    /// The write source fired: the non-blocking connect ended, or room came for output.
    private func socketWritable(_ socket: NATSSocket, rest: ArraySlice<ResolvedAddress>) {
        guard self.socket === socket, !socket.isCancelled else { return }
        guard !socket.isEstablished else {
            flushOutput()
            return
        }
        let error = (try? Syscall.pendingError(socket.fd)) ?? EIO
        if error == 0 {
            established(socket)
        } else {
            socket.cancel()
            self.socket = nil
            connect(socket.server, rest, lastError: SystemCallError("connect", errno: error).reason)
        }
    }

    /// The TCP connection is up: watch for input, and for room only when output waits.
    private func established(_ socket: NATSSocket) {
        socket.isEstablished = true
        _ = try? Syscall.setOption(socket.fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1, "TCP_NODELAY")
        socket.suspendWrites()
        let reader = DispatchSource.makeReadSource(fileDescriptor: socket.fd, queue: queue)
        reader.setEventHandler { [self] in readAvailable(socket) }
        reader.setCancelHandler { socket.sourceCancelled() }
        socket.adopt(read: reader)
        reader.resume()
        parser.reset()
        perform(machine.socketOpened())
    }

    /// Cancels the socket's sources (its descriptor closes after them) and forgets what was read or queued for it.
    func closeSocket() {
        socket?.cancel()
        socket = nil
        parser.reset()
        control.removeAll()
    }

    // MARK: Reading

    /// Reads and handles what the server has sent so far now (a few reads at most), instead of when the queue comes
    /// to the socket's read event: for a caller about to act on a message's absence (a timeout) while the message
    /// may wait unread (the process was not scheduled for a while, and the timer and the socket are both ready).
    public func readPendingInput() {
        assertOnQueue()
        guard let socket, socket.isEstablished, !socket.isCancelled else { return }
        readAvailable(socket)
    }

    /// Reads and handles frames until the socket has nothing more, a few reads per turn.
    private func readAvailable(_ socket: NATSSocket) {
        for _ in 0..<Self.readsPerTurn {
            guard self.socket === socket, socket.isEstablished, !socket.isCancelled else { return }
            var outcome: Result<IOResult, SystemCallError> = .success(.wouldBlock)
            let fd = socket.fd
            parser.withWritableTail(minimumCapacity: Self.readSize) { space in
                do throws(SystemCallError) {
                    let result = try Syscall.read(fd, space)
                    outcome = .success(result)
                    if case .processed(let count) = result { return count }
                } catch {
                    outcome = .failure(error)
                }
                return 0
            }
            switch outcome {
            case .failure(let error):
                lose(socket, reason: error.reason)
                return
            case .success(.wouldBlock):
                return
            case .success(.processed(0)):
                lose(socket, reason: "the server closed the connection")
                return
            case .success(.processed):
                handleFrames(socket)
            }
        }
        // More may be waiting: come back after the queue's other work.
        queue.async { [self] in readAvailable(socket) }
    }

    private func lose(_ socket: NATSSocket, reason: String) {
        let error = NATSError.connectionFailed(server: socket.server.description, reason: reason)
        perform(machine.socketFailed(error, now: MonotonicClock.nanoseconds()))
    }

    /// Handles every complete frame in the parser (stops when a frame ended the connection).
    private func handleFrames(_ socket: NATSSocket) {
        while self.socket === socket, let result = parser.next() {
            switch result {
            case .failure(let error):
                perform(machine.protocolViolation(error, now: MonotonicClock.nanoseconds()))
            case .success(.message(let message)):
                if let handler = subscriptions.deliver(to: message.sid) { handler(message) }
            case .success(.ping):
                perform(machine.pingReceived())
            case .success(.pong):
                perform(machine.pongReceived())
            case .success(.info(let info)):
                serverInfo = info
                perform(machine.infoReceived(info, now: MonotonicClock.nanoseconds()))
            case .success(.ok):
                break
            case .success(.error(let text)):
                perform(machine.errorReceived(text, now: MonotonicClock.nanoseconds()))
            }
        }
    }

    // MARK: Writing

    /// Writes at the end of this turn of the queue (once, however many frames the turn queues).
    func scheduleFlush() {
        guard !isFlushScheduled else { return }
        isFlushScheduled = true
        queue.async { [self] in
            isFlushScheduled = false
            flushOutput()
        }
    }

    /// Writes what is queued now, ahead of the flush scheduled for the end of this turn (which then finds less or
    /// nothing to write): for a caller whose frames should leave before other work of the same turn.
    public func flushNow() {
        assertOnQueue()
        guard pendingByteCount > 0 else { return }
        flushOutput()
    }

    /// What one buffer's write came to.
    private enum WriteOutcome {
        case done
        case blocked
        case failed(SystemCallError)
    }

    /// Writes the control frames, then (once connected) the output, as far as the socket takes them; watches for
    /// room when it is full.
    func flushOutput() {
        guard let socket, socket.isEstablished, !socket.isCancelled else { return }
        var outcome = Self.write(&control, to: socket.fd)
        if case .done = outcome, machine.phase == .connected {
            outcome = Self.write(&output, to: socket.fd)
        }
        switch outcome {
        case .done: socket.suspendWrites()
        case .blocked: socket.resumeWrites()
        case .failed(let error): lose(socket, reason: error.reason)
        }
    }

    private static func write(_ buffer: inout OutboundBuffer, to fd: Int32) -> WriteOutcome {
        while !buffer.isEmpty {
            let start = buffer.start
            let result: Result<IOResult, SystemCallError> = buffer.bytes.withUnsafeBytes { bytes in
                do throws(SystemCallError) {
                    return .success(try Syscall.send(fd, UnsafeRawBufferPointer(rebasing: bytes[start...])))
                } catch {
                    return .failure(error)
                }
            }
            switch result {
            case .success(.processed(let count)): buffer.consume(count)
            case .success(.wouldBlock): return .blocked
            case .failure(let error): return .failed(error)
            }
        }
        return .done
    }
}
