import Dispatch
import Glibc
import SubscriptionSystem

/// One connected socket to a subd server, driven by Dispatch sources on its own serial queue.
///
/// Every mutable property is touched only on `queue`; the public methods hop onto it. Commands are written
/// in the order they are submitted and their replies handed back in the same order (FIFO), so callers may
/// pipeline. Pushes go to the ``SubscriptionSink``s, except the one that answers a `GET` (see
/// ``requestValue(_:of:)``). Writes that would block wait in `output` for a write
/// source; nothing blocks the queue and nothing spins.
final class Connection: @unchecked Sendable {
    private enum State {
        /// Commands are accepted.
        case open
        /// QUIT was sent; no new command is accepted; the end of the connection is expected.
        case closing
        /// The socket is closed (or closing); every command fails with ``ClientError/connectionLost``.
        case closed
    }

    /// Bytes asked of one read(2).
    private static let readSize = 64 * 1024

    /// The endpoint as text, for messages.
    let endpoint: String
    private let queue: DispatchQueue
    private let fd: Int32
    /// The TLS session when the server is a `tls://` listener; nil for plain TCP and Unix sockets.
    private let tls: ClientTLS?
    private var state = State.open
    private var readSource: DispatchSourceRead?
    private var writeSource: DispatchSourceWrite?
    private var writeSourceSuspended = true
    private var liveSources = 0
    private var output: [UInt8] = []
    private var outputIndex = 0
    private var writeBroken = false
    /// True while reading is paused because a subscription's consumer fell behind (see ``Backlog``).
    private var readPaused = false
    /// Why the connection ended; what later commands fail with (a refusal such as `-ERR LIMIT` on connect).
    private var endReason = ClientError.connectionLost
    private let readBuffer: UnsafeMutableRawBufferPointer
    private var parser = ServerMessageParser()
    private var waiting = ReplyQueue()
    private var sinks: [SubscriptionSink] = []
    /// A `MSG` push of the number a waiting `GET` asks for, held back until the next thing the server sends tells
    /// whether it is the GET's answer (the GET's `+OK <rev>` follows it) or a publication (anything else follows).
    private var heldPush: ReceivedMessage?
    private var nextSinkID = 0
    /// Told once, with the reason, when the connection ends (``whenEnded(_:)``).
    private var endWatchers: [@Sendable (ClientError) -> Void] = []

    /// Takes ownership of `fd`, a connected non-blocking stream socket, and starts reading it. The read and
    /// write sources hold the connection until the socket is closed.
    init(fd: Int32, endpoint: String, tls: ClientTLS? = nil) {
        self.fd = fd
        self.tls = tls
        self.endpoint = endpoint
        self.queue = DispatchQueue(label: "subd.client.connection")
        self.readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.readSize, alignment: 1)
        let reader = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        let writer = DispatchSource.makeWriteSource(fileDescriptor: fd, queue: queue)
        readSource = reader
        writeSource = writer
        liveSources = 2
        reader.setEventHandler { [self] in handleReadable() }
        reader.setCancelHandler { [self] in sourceCancelled() }
        writer.setEventHandler { [self] in flushOutput() }
        writer.setCancelHandler { [self] in sourceCancelled() }
        reader.resume()
    }

    deinit {
        readBuffer.deallocate()
    }

    // MARK: - Commands

    /// Sends one command and waits for its reply.
    func request(_ command: [UInt8]) async -> Result<ServerReply, ClientError> {
        await withCheckedContinuation { continuation in
            queue.async { [self] in
                enqueue(command) { continuation.resume(returning: $0) }
            }
        }
    }

    /// Sends `GET`-like `command` about `number` and waits for its reply, with the `MSG` push of `number` that came
    /// right before the reply and carries the revision the reply names (`+OK <rev>`), if any. That push is an answer,
    /// not a publication: the subscriptions do not get it.
    func requestValue(_ command: [UInt8], of number: String) async
        -> Result<(reply: ServerReply, value: ReceivedMessage?), ClientError>
    {
        await withCheckedContinuation { continuation in
            queue.async { [self] in
                let capture = ValueCapture(number: number)
                enqueue(command, capture: capture) { result in
                    continuation.resume(returning: result.map { (reply: $0, value: capture.message) })
                }
            }
        }
    }

    /// Hands `command` to the connection without waiting: it is written after every command handed over before it
    /// (from any thread), and `handler` gets its reply on the connection's queue. A ``ReconnectingClient`` sends what
    /// it buffered while disconnected this way, in order, before any later command.
    /// With `capturing`, the `MSG` push of that number that answers a `GET` comes with the reply (as in
    /// ``requestValue(_:of:)``).
    /// When the connection has ended before the command could be written, `unsent` is called instead of `handler`
    /// (the command can go on another connection: nothing of it was sent).
    func submit(
        _ command: [UInt8], capturing number: String? = nil, unsent: @escaping @Sendable () -> Void,
        _ handler: @escaping @Sendable (Result<(reply: ServerReply, value: ReceivedMessage?), ClientError>) -> Void
    ) {
        queue.async { [self] in
            guard state == .open else {
                unsent()
                return
            }
            let capture = number.map(ValueCapture.init)
            enqueue(command, capture: capture) { result in
                handler(result.map { (reply: $0, value: capture?.message) })
            }
        }
    }

    /// Calls `handler` once, on the connection's queue, with the reason the connection ended (after the waiting
    /// commands were failed and the subscriptions ended): at once when it has ended already.
    func whenEnded(_ handler: @escaping @Sendable (ClientError) -> Void) {
        queue.async { [self] in
            if state == .closed { handler(endReason) } else { endWatchers.append(handler) }
        }
    }

    /// Sends the commands back to back (in this order, with no other command between them) and waits for
    /// all their replies, in the same order.
    func requests(_ commands: [[UInt8]]) async -> [Result<ServerReply, ClientError>] {
        await withCheckedContinuation { continuation in
            queue.async { [self] in
                enqueueAll(commands) { continuation.resume(returning: $0) }
            }
        }
    }

    /// Registers a sink for `patterns` before sending their SUB commands, so no push that follows a SUB is
    /// lost. When a SUB is refused, the sink is dropped, the patterns that were taken are given back
    /// (UNSUB) and the first refusal is returned.
    func subscribe(
        _ patterns: [Pattern],
        commands: [[UInt8]],
        from: String?,
        group: String?,
        continuation: AsyncThrowingStream<Subscription.Event, any Error>.Continuation,
        backlog: Backlog
    ) async -> Result<Int, ClientError> {
        await withCheckedContinuation { (done: CheckedContinuation<Result<Int, ClientError>, Never>) in
            queue.async { [self] in
                guard state == .open else {
                    continuation.finish()
                    done.resume(returning: .failure(.connectionLost))
                    return
                }
                // The server keeps one subscription per pattern and session: a second SUB with another from= or
                // group= would silently change what the first subscription receives.
                for pattern in patterns {
                    for sink in sinks where sink.patterns.contains(where: { $0.isSpelled(pattern.text) }) {
                        let other = sink.from != from ? "from= filter" : sink.group != group ? "group" : nil
                        guard let other else { continue }
                        continuation.finish()
                        done.resume(
                            returning: .failure(
                                .invalidArgument(
                                    "'\(pattern.text)' is already subscribed on this connection with another \(other); "
                                        + "use a second connection")))
                        return
                    }
                }
                let id = nextSinkID
                nextSinkID += 1
                sinks.append(
                    SubscriptionSink(
                        id: id, patterns: patterns, from: from, group: group, continuation: continuation,
                        backlog: backlog))
                enqueueAll(commands) { [self] results in
                    let refusals = results.enumerated().compactMap { index, result in
                        Self.refusal(result).map { (index, $0) }
                    }
                    guard let firstRefusal = refusals.first?.1 else {
                        done.resume(returning: .success(id))
                        return
                    }
                    let refused = Set(refusals.map(\.0))
                    let taken = patterns.indices.filter { !refused.contains($0) }.map { patterns[$0].text }
                    dropSink(id, unsubscribing: taken)
                    continuation.finish()
                    done.resume(returning: .failure(firstRefusal))
                }
            }
        }
    }

    /// Called when a ``Subscription``'s stream ends on the consumer's side (iteration cancelled, or the
    /// stream dropped): forgets its sink and sends UNSUB for the patterns no other subscription holds.
    func subscriptionEnded(_ id: Int) {
        queue.async { [self] in
            guard let sink = sinks.first(where: { $0.id == id }) else { return }
            dropSink(id, unsubscribing: sink.patterns.map(\.text))
        }
    }

    /// A consumer caught up: read again once every subscription's backlog is small.
    func consumerCaughtUp() {
        queue.async { [self] in resumeReadingIfCaughtUp() }
    }

    private func resumeReadingIfCaughtUp() {
        guard readPaused, state != .closed, sinks.allSatisfy({ $0.backlog.current < Backlog.resumeBelow }) else {
            return
        }
        readPaused = false
        readSource?.resume()
    }

    /// Sends QUIT and waits until the connection is closed. Subscriptions end without an error.
    func quit() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { [self] in
                guard state == .open else {
                    continuation.resume()
                    return
                }
                enqueue(Command.quit) { [self] _ in
                    end(.connectionLost)
                    continuation.resume()
                }
                state = .closing
            }
        }
    }

    /// Ends the connection now with `error` (e.g. no answer to `HELLO` in time): waiting commands fail with it.
    func abort(_ error: ClientError) {
        queue.async { [self] in end(error) }
    }

    /// Closes the socket now, without QUIT. Waiting commands fail with ``ClientError/connectionLost``.
    func closeNow() {
        queue.async { [self] in
            if state == .open { state = .closing }
            end(.connectionLost)
        }
    }

    // MARK: - Queue-confined work

    private func enqueue(_ command: [UInt8], capture: ValueCapture? = nil, _ handler: @escaping ReplyHandler) {
        guard state == .open else {
            handler(.failure(state == .closed ? endReason : .connectionLost))
            return
        }
        waiting.append(handler, capture: capture)
        write(command)
    }

    private func enqueueAll(_ commands: [[UInt8]], _ done: @escaping ([Result<ServerReply, ClientError>]) -> Void) {
        guard !commands.isEmpty else {
            done([])
            return
        }
        guard state == .open else {
            done(Array(repeating: .failure(state == .closed ? endReason : .connectionLost), count: commands.count))
            return
        }
        let collector = ReplyCollector(count: commands.count, done: done)
        for command in commands {
            waiting.append { collector.add($0) }
            write(command)
        }
    }

    private func dropSink(_ id: Int, unsubscribing patterns: [String]) {
        sinks.removeAll { $0.id == id }
        resumeReadingIfCaughtUp()
        guard state == .open else { return }
        var sent = Set<String>()
        for pattern in patterns where !sent.contains(pattern) {
            sent.insert(pattern)
            if sinks.contains(where: { sink in sink.patterns.contains { $0.text.utf8.elementsEqual(pattern.utf8) } }) {
                continue
            }
            enqueue(Command.unsub(pattern)) { _ in }
        }
    }

    private static func refusal(_ result: Result<ServerReply, ClientError>) -> ClientError? {
        switch result {
        case .failure(let error): return error
        case .success(.ok): return nil
        case .success(.error(let code, let message)): return .server(code: code, message: message)
        case .success(.list): return .protocolViolation("a list came in reply to SUB")
        }
    }

    // MARK: - Reading

    private func handleReadable() {
        guard state != .closed else { return }
        let result: IOResult
        do {
            if let tls {
                result = try tls.read(into: readBuffer)
            } else {
                result = try Syscall.read(fd, readBuffer)
            }
        } catch {
            end(.connectionLost)
            return
        }
        switch result {
        case .wouldBlock:
            return
        case .processed(0):
            end(.connectionLost)
        case .processed(let count):
            parser.append(UnsafeRawBufferPointer(rebasing: readBuffer[0..<count]))
            drainParser()
            if !readPaused && state != .closed && sinks.contains(where: { $0.backlog.current > Backlog.pauseAbove }) {
                readPaused = true
                readSource?.suspend()
            }
            // Bytes OpenSSL already decrypted do not make the socket readable again: read them now.
            if let tls, !readPaused, state != .closed, tls.pendingBytes > 0 {
                queue.async { [self] in handleReadable() }
            }
        }
    }

    private func drainParser() {
        while state != .closed {
            let message: ServerMessage?
            do {
                message = try parser.next()
            } catch {
                end(error)
                return
            }
            guard let message else { return }
            switch message {
            case .reply(let reply):
                guard let entry = waiting.popFirst() else {
                    // An error before any command is the server refusing the connection (`-ERR LIMIT` at
                    // max_connections, sent on connect); anything else unasked-for breaks the protocol.
                    if case .error(let code, let message) = reply {
                        end(.server(code: code, message: message))
                    } else {
                        end(.protocolViolation("a reply came with no command waiting for one"))
                    }
                    return
                }
                if let capture = entry.capture, let held = heldPush {
                    heldPush = nil
                    if case .ok(let text) = reply, Self.revision(inOK: text) == held.revision {
                        capture.message = held
                    } else {
                        deliver(held)
                    }
                }
                entry.handler(.success(reply))
            case .message(let received):
                if let capture = waiting.first?.capture, received.revision != nil,
                    received.number.utf8.elementsEqual(capture.number.utf8)
                {
                    // Maybe the GET's answer: that is known when the next thing comes (see `heldPush`).
                    releaseHeldPush()
                    heldPush = received
                } else {
                    releaseHeldPush()
                    deliver(received)
                }
            case .gone(let number):
                releaseHeldPush()
                deliverGone(number)
            }
        }
    }

    /// The revision in the text of a `+OK <rev>` reply (`OK 7`), or nil.
    private static func revision(inOK text: String) -> Int? {
        guard text.hasPrefix("OK ") else { return nil }
        return Int(text.dropFirst(3))
    }

    /// Hands the held push to the subscriptions: something other than its GET's reply came after it.
    private func releaseHeldPush() {
        guard let held = heldPush else { return }
        heldPush = nil
        deliver(held)
    }

    private func deliver(_ received: ReceivedMessage) {
        for sink in sinks where sink.wants(received) {
            sink.backlog.add(Backlog.weight(of: received))
            sink.continuation.yield(.message(received))
        }
    }

    private func deliverGone(_ number: String) {
        for sink in sinks where sink.holdsExactly(number) {
            sink.patterns.removeAll { $0.isExactly(number) }
            sink.continuation.yield(.gone(number))
            if sink.patterns.isEmpty {
                sinks.removeAll { $0.id == sink.id }
                sink.continuation.finish()
            }
        }
    }

    // MARK: - Writing

    private func write(_ bytes: [UInt8]) {
        guard !writeBroken else { return }
        if output.isEmpty {
            output = bytes
        } else {
            if outputIndex * 2 >= output.count {
                output.removeSubrange(0..<outputIndex)
                outputIndex = 0
            }
            output.append(contentsOf: bytes)
        }
        flushOutput()
    }

    /// Writes as much of `output` as the socket takes; arms the write source when it takes no more.
    private func flushOutput() {
        sending: while outputIndex < output.count {
            let sent = output.withUnsafeBytes { raw in
                Result { () throws(SystemCallError) in
                    let bytes = UnsafeRawBufferPointer(rebasing: raw[outputIndex...])
                    return if let tls { try tls.write(bytes) } else { try Syscall.send(fd, bytes) }
                }
            }
            switch sent {
            case .success(.processed(let written)):
                outputIndex += written
            case .success(.wouldBlock):
                if writeSourceSuspended, let writeSource {
                    writeSourceSuspended = false
                    writeSource.resume()
                }
                return
            case .failure:
                // The peer is gone; the read side sees the end and fails the waiting commands. Replies already
                // on their way (e.g. -ERR TOOBIG) are still read first.
                writeBroken = true
                break sending
            }
        }
        if output.capacity > 1 << 20 {
            output = []
        } else {
            output.removeAll(keepingCapacity: true)
        }
        outputIndex = 0
        if !writeSourceSuspended, let writeSource {
            writeSourceSuspended = true
            writeSource.suspend()
        }
    }

    // MARK: - The end

    /// Ends the connection: fails the waiting commands with `error` and ends the subscriptions (with `error`,
    /// unless QUIT was sent), then closes the socket once both sources are cancelled.
    private func end(_ error: ClientError) {
        guard state != .closed else { return }
        releaseHeldPush()
        let expected = state == .closing
        state = .closed
        endReason = error
        stopSources()
        for handler in waiting.removeAll() { handler(.failure(error)) }
        let ended = sinks
        sinks = []
        for sink in ended {
            if expected { sink.continuation.finish() } else { sink.continuation.finish(throwing: error) }
        }
        let watchers = endWatchers
        endWatchers = []
        for watcher in watchers { watcher(error) }
    }

    private func stopSources() {
        if readPaused {
            readPaused = false
            readSource?.resume()
        }
        readSource?.cancel()
        if let writeSource {
            if writeSourceSuspended {
                writeSourceSuspended = false
                writeSource.resume()
            }
            writeSource.cancel()
        }
        output = []
        outputIndex = 0
    }

    private func sourceCancelled() {
        liveSources -= 1
        if liveSources == 0 {
            readSource = nil
            writeSource = nil
            Syscall.close(fd)
        }
    }
}

/// Gathers the replies of a batch of commands and hands them over when the last one is in.
private final class ReplyCollector {
    private var results: [Result<ServerReply, ClientError>] = []
    private let count: Int
    private let done: ([Result<ServerReply, ClientError>]) -> Void

    init(count: Int, done: @escaping ([Result<ServerReply, ClientError>]) -> Void) {
        self.count = count
        self.done = done
        results.reserveCapacity(count)
    }

    func add(_ result: Result<ServerReply, ClientError>) {
        results.append(result)
        if results.count == count { done(results) }
    }
}
