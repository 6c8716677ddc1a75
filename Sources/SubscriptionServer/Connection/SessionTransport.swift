import SubscriptionMQTT
import SubscriptionProtocol
import SubscriptionSystem

/// How a session's bytes travel: the socket itself (TCP or a Unix socket), a TLS session over it (`tls://`), or
/// WebSocket frames over either (`ws://`, `wss://`). The one seam between a connection and the front it carries
/// (``Session``: the line protocol's parser, client state and customer role): the front reads through
/// ``read(into:readSize:)`` and writes its ``OutputQueue`` through ``write(_:loop:)``, whatever is underneath.
/// Each layer's write state is a plain value (``OutputQueue``, `WebSocketStreamFraming`, ``TLSProgress``); the
/// system calls are ``OutputWriter``'s and the TLS stream's.
///
/// The plain socket costs one check of ``tls`` and one of ``webSocket`` per read or write call, no more.
struct SessionTransport {
    /// The socket.
    let fd: Int32
    /// The TLS session on a `tls://` or `wss://` listener's connection; nil on a plain one.
    let tls: TLSStream?
    /// The WebSocket layer on a `ws://` or `wss://` listener's connection (over ``tls`` for `wss://`); nil when the
    /// bytes are the line protocol's stream itself.
    let webSocket: WebSocketTransport?

    /// True while a TLS handshake or a WebSocket upgrade is under way, or a WebSocket frame's header has come in
    /// part: the liveness check counts it as a command not finished (`command_timeout` ends a stalled one).
    var holdsPartialInput: Bool {
        tls?.progress.isEstablished == false || webSocket?.holdsPartialInput == true
    }

    /// True when a read that found nothing waits for room to write first (a TLS record to send).
    var inputWaitsForRoom: Bool { tls?.progress.inputWaitsFor == .writable }

    /// Reads once: on a plain or TLS connection straight into `parser`'s buffer (at least `readSize` bytes of room);
    /// on a WebSocket connection into its layer, whose ``WebSocketTransport/takeInput(into:_:)`` then hands the
    /// line protocol's bytes to the parser.
    func read<Sink: ByteSink>(into sink: inout Sink, readSize: Int) throws(SystemCallError) -> IOResult {
        if let webSocket { return try webSocket.read(from: fd, tls: tls) }
        var outcome: Result<IOResult, SystemCallError> = .success(.wouldBlock)
        let fd = self.fd
        let tls = self.tls
        sink.withWritableTail(minimumCapacity: readSize) { Self.read(fd, tls, into: $0, outcome: &outcome) }
        return try outcome.get()
    }

    /// One read(2) of `fd`, or `SSL_read` of `tls`, into `space`, made to be the body of a buffer's
    /// `withWritableTail` (which cannot throw): returns the bytes to keep and puts the read's result in `outcome`.
    static func read(
        _ fd: Int32, _ tls: TLSStream?, into space: UnsafeMutableRawBufferPointer,
        outcome: inout Result<IOResult, SystemCallError>
    ) -> Int {
        do throws(SystemCallError) {
            let result = if let tls { try tls.read(into: space) } else { try Syscall.read(fd, space) }
            outcome = .success(result)
            if case .processed(let n) = result { return n }
        } catch {
            outcome = .failure(error)
        }
        return 0
    }

    /// Writes as much of `output` as the connection takes, with `loop`'s iovecs and scratch buffer; returns the
    /// bytes written (frame headers included), or nil when nothing can go out yet (a TLS handshake not done).
    func write(_ output: inout OutputQueue, loop: EventLoop) throws(SystemCallError) -> Int? {
        if let tls {
            guard tls.progress.isEstablished else { return nil }
            guard let webSocket else {
                return try OutputWriter.write(&output, through: tls, scratch: loop.writeScratch)
            }
            return try OutputWriter.write(
                &output, framedBy: &webSocket.framing, through: tls, scratch: loop.writeScratch)
        }
        guard let webSocket else {
            return try OutputWriter.write(
                &output, to: fd, vectors: loop.vectors, maxVectors: loop.maxVectors, scratch: loop.writeScratch)
        }
        return try OutputWriter.write(
            &output, framedBy: &webSocket.framing, to: fd, vectors: loop.vectors, maxVectors: loop.maxVectors,
            scratch: loop.writeScratch)
    }

    /// Shuts down the write side: TLS's close_notify first, then the socket's FIN.
    func shutdownWrite() {
        tls?.shutdown()
        Syscall.shutdownWrite(fd)
    }

    // MARK: What a layer asks of the front

    /// What the layers under the line protocol ask the session to do after a read, besides the line protocol's
    /// bytes they handed to the parser.
    enum Input {
        /// Queue these bytes as they are, not the line protocol's (``Session`` puts them in its output between
        /// frames): an answer to the WebSocket upgrade, a pong, a close frame.
        case send([UInt8])
        /// The connection is to close for `reason` once its output is out, `goodbye` queued as it is after the
        /// replies to the commands that came before (a WebSocket close frame); `problem` says why, for the log, when
        /// the client broke the transport's rules.
        case close(CloseReason, goodbye: [UInt8], problem: String?)
    }

    /// Hands what the last ``read(into:readSize:)`` brought to `parser` (a WebSocket connection's data; on a plain
    /// or TLS connection the bytes are already there), calling `handle` for what else the layers ask, in order.
    /// Returns true when a WebSocket upgrade was accepted by this call (``WebSocketTransport/takeInput(into:_:)``):
    /// the session then picks its front by the subprotocol (``subprotocol``) and calls again.
    @discardableResult
    func takeInput<Sink: ByteSink>(into sink: inout Sink, _ handle: (Input) -> Void) -> Bool {
        guard let webSocket else { return false }
        return webSocket.takeInput(into: &sink) { input in
            switch input {
            case .upgraded(let response):
                handle(.send(response))
            case .refused(let response, let reason):
                handle(
                    .close(
                        .protocolError, goodbye: response,
                        problem: "WebSocket client refused: upgrade refused: \(reason)"))
            case .served(let response, _):
                handle(.close(.client, goodbye: response, problem: nil))
            case .control(let frame):
                handle(.send(frame))
            case .close(let frame, let violation):
                let problem = violation.map { "WebSocket client refused: \($0)" }
                handle(.close(violation == nil ? .client : .protocolError, goodbye: frame, problem: problem))
            }
        }
    }

    /// Bytes queued as they are (``Input/send(_:)``, ``goodbye(for:)``) were appended to the output behind `queued`
    /// unwritten ones: a WebSocket connection keeps them out of its frames.
    func queuedAsIs(count: Int, behind queued: Int) {
        webSocket?.framing.queuedRaw(count: count, behind: queued)
    }

    /// The subprotocol a WebSocket upgrade agreed on; nil on any other connection, or when none was offered.
    var subprotocol: String? { webSocket?.subprotocol }

    /// The bytes that end the connection for `reason` after the session's last reply (a WebSocket close frame), once;
    /// nil when the transport has none or sent them already.
    func goodbye(for reason: CloseReason) -> [UInt8]? {
        webSocket?.closeFrame(for: reason)
    }

    /// The answer to a client that timed out before its transport was open, in the transport's own terms (HTTP 408
    /// to a WebSocket upgrade not complete); nil when the line protocol's `-ERR` is the answer.
    func answerToTimeout() -> [UInt8]? {
        webSocket?.timedOutBeforeUpgrade()
    }

    /// Puts reloaded limits in force for the transport (a WebSocket frame's size).
    func apply(limits: ProtocolLimits) {
        webSocket?.limits = WebSocketTransport.limits(for: limits)
    }

    /// Gives back buffers the transport holds with nothing in them.
    func releaseIdleMemory() {
        webSocket?.releaseIdleMemory()
    }
}

/// Where a transport puts what it read for the front: the line protocol's parser, or MQTT's decoder. Both buffer the
/// bytes themselves; a read goes straight into the free space at their tail.
protocol ByteSink {
    /// Appends a copy of `bytes`.
    mutating func append(_ bytes: UnsafeRawBufferPointer)
    /// Lets `body` write up to the space given straight into the buffer; keeps what it returns it wrote.
    @discardableResult
    mutating func withWritableTail(
        minimumCapacity: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> Int
    ) rethrows -> Int
}

extension CommandParser: ByteSink {}
extension MQTTDecoder: ByteSink {}
