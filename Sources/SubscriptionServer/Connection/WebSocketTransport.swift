import SubscriptionProtocol
import SubscriptionSystem
import SubscriptionWebSocket
import SubscriptionWire

/// The WebSocket layer of a session on a `ws://` or `wss://` listener (RFC 6455), between the socket (or its TLS
/// session) and the line protocol: first the HTTP/1.1 upgrade, then binary or text messages whose bytes are the line
/// protocol's stream in (a message may hold several commands or part of one), and the session's output framed as
/// binary messages out (``WebSocketStreamFraming``). The session reads through ``read(from:tls:)``, hands the bytes
/// on with ``takeInput(into:_:)``, and writes through ``OutputWriter`` with ``framing``; what is not the line
/// protocol (the handshake's response, pongs, close frames) it queues as raw output.
///
/// A class owned by one session and used only on its loop's queue, so its buffers are mutated in place.
final class WebSocketTransport {
    /// What the input asked of the session, besides the line protocol's bytes it appended to the parser.
    enum Input {
        /// The upgrade was accepted: queue `response` (`101 Switching Protocols`) raw; frames follow.
        case upgraded(response: [UInt8])
        /// The upgrade request was refused or could not be read: queue `response` (its HTTP status) raw and close.
        case refused(response: [UInt8], reason: String)
        /// A plain request for a file of the web console (``WebConsoleRoute``): queue `response` raw and close.
        case served(response: [UInt8], path: String)
        /// Queue this control frame raw (a pong).
        case control([UInt8])
        /// Queue this close frame raw and close: the client closed (its frame echoed), or its bytes broke RFC 6455
        /// (`violation`, for the log).
        case close(frame: [UInt8], violation: WebSocketViolation?)
    }

    /// The most bytes the upgrade request's head may take.
    static let maxHeadBytes = 8192
    /// Read this much per read(2) while the request head arrives.
    private static let headReadSize = 2048

    /// The listener's handshake (path, origins).
    let handshake: WebSocketHandshake
    /// True when a plain `GET` of the web console's files is answered (`web_console`).
    let servesConsole: Bool
    /// The request head while it arrives; nil once the upgrade is answered.
    private var head: HTTPRequestHeadParser?
    /// The frames after the upgrade.
    private var decoder: WebSocketFrameDecoder
    /// The bytes of the head as read, until it is complete.
    private var headBuffer = InputBuffer()
    /// Where the session's output is cut into frames.
    var framing = WebSocketStreamFraming()
    /// True once a close frame was queued: nothing is framed after it, and no second one is sent.
    private(set) var isCloseQueued = false
    /// The subprotocol the upgrade agreed on (`subd`, `mqtt`), nil when the client offered none (the line protocol).
    private(set) var subprotocol: String?

    /// A layer that waits for the upgrade request `handshake` judges; frames within `limits` follow.
    init(handshake: WebSocketHandshake, limits: WebSocketLimits, servesConsole: Bool = false) {
        self.handshake = handshake
        self.servesConsole = servesConsole
        self.head = HTTPRequestHeadParser(maxHeadBytes: Self.maxHeadBytes)
        self.decoder = WebSocketFrameDecoder(limits: limits)
    }

    /// True while the upgrade request is not answered, or the decoder holds part of a frame's header or a control
    /// frame (the liveness check counts either as a command not finished).
    var holdsPartialInput: Bool { head != nil || decoder.bufferedByteCount > 0 }

    /// The sizes frames may have (a reload changes them).
    var limits: WebSocketLimits {
        get { decoder.limits }
        set { decoder.limits = newValue }
    }

    /// The frame sizes for a server's limits: one frame may carry a whole command, its longest line and largest
    /// payload with their line ends; a message is not limited (its bytes are never gathered, and the line protocol
    /// limits every command in it).
    static func limits(for protocolLimits: ProtocolLimits) -> WebSocketLimits {
        WebSocketLimits(maxFramePayload: protocolLimits.maxLine + protocolLimits.maxPayload + 4)
    }

    /// Reads what the socket (or `tls`) has into the head's or the decoder's buffer.
    func read(from fd: Int32, tls: TLSStream?) throws(SystemCallError) -> IOResult {
        var outcome: Result<IOResult, SystemCallError> = .success(.wouldBlock)
        let body = { (space: UnsafeMutableRawBufferPointer) -> Int in
            SessionTransport.read(fd, tls, into: space, outcome: &outcome)
        }
        if head != nil {
            headBuffer.withWritableTail(minimumCapacity: Self.headReadSize, body)
        } else {
            decoder.withWritableTail(minimumCapacity: 65_536, body)
        }
        return try outcome.get()
    }

    /// Takes what was read: the request head until it is complete, then frames, whose data is appended to `sink`;
    /// calls `handle` for what the session must do, in order. Returns true when the upgrade was accepted in this
    /// call: it stops there, so that the session picks the front the subprotocol names (``subprotocol``) and calls
    /// again with that front's sink for the frames that came with the request.
    @discardableResult
    func takeInput<Sink: ByteSink>(into sink: inout Sink, _ handle: (Input) -> Void) -> Bool {
        if head != nil {
            guard let answer = takeHead() else { return false }
            handle(answer)
            guard case .upgraded = answer else { return false }
            return true
        }
        while let event = decoder.next() {
            switch event {
            case .data(let bytes):
                bytes.withUnsafeBytes { sink.append($0) }
            case .ping(let payload):
                handle(.control(WebSocketFrameEncoder.pongFrame(payload: payload)))
            case .pong:
                break
            case .close(let code, _):
                handle(.close(frame: closeFrame(code ?? .normalClosure, ""), violation: nil))
            case .failure(let violation):
                handle(.close(frame: closeFrame(violation.closeCode, violation.description), violation: violation))
            }
        }
        return false
    }

    /// Gives back the frame buffer when it holds no partial frame (an idle connection keeps no read buffer).
    func releaseIdleMemory() {
        decoder.releaseStorageIfEmpty()
    }

    /// The HTTP response for a connection whose upgrade request did not arrive whole in time (`408`), or nil once
    /// the upgrade was answered; nothing more is read as the request.
    func timedOutBeforeUpgrade() -> [UInt8]? {
        guard head != nil else { return nil }
        head = nil
        isCloseQueued = true
        return MetricsRoute.timeout.encoded()
    }

    /// The close frame for a session closing for `reason` on the server's side, unless one was queued already.
    func closeFrame(for reason: CloseReason) -> [UInt8]? {
        guard !isCloseQueued, head == nil else { return nil }
        switch reason {
        case .client: return closeFrame(.normalClosure, "")
        case .shutdown: return closeFrame(.goingAway, "the server is stopping")
        case .unsaved: return closeFrame(.internalError, "the state could not be saved")
        default: return closeFrame(.policyViolation, reason.rawValue)
        }
    }

    /// A close frame, noted as queued.
    private func closeFrame(_ code: WebSocketCloseCode, _ reason: String) -> [UInt8] {
        isCloseQueued = true
        return WebSocketFrameEncoder.closeFrame(code: code, reason: reason)
    }

    /// The head's bytes so far into the parser: nil while it is incomplete, else the answer. Bytes after the head
    /// (a client that did not wait for the answer) go to the decoder.
    private func takeHead() -> Input? {
        guard var parser = head else { return nil }
        let before = parser.headBytes
        let unread = headBuffer.bytes[headBuffer.readIndex..<headBuffer.writeIndex]
        let outcome = parser.consume(unread)
        head = parser
        switch outcome {
        case .needMore:
            headBuffer.readIndex = headBuffer.writeIndex
            return nil
        case .failed(let error):
            head = nil
            isCloseQueued = true
            return .refused(response: MetricsRoute.response(to: error).encoded(), reason: "\(error)")
        case .complete(let request):
            let rest = unread.dropFirst(parser.headBytes - before)
            if !rest.isEmpty { decoder.append(contentsOf: rest) }
            headBuffer = InputBuffer()
            head = nil
            let upgrade = WebSocketUpgradeRequest(
                method: request.method, target: request.target, minorVersion: request.minorVersion,
                fields: request.fields)
            if servesConsole, let response = WebConsoleRoute.response(to: upgrade, webSocketPath: handshake.path) {
                isCloseQueued = true
                return .served(response: response.encoded(), path: String(upgrade.path))
            }
            switch handshake.respond(to: upgrade) {
            case .accepted(let response, let subprotocol):
                self.subprotocol = subprotocol
                return .upgraded(response: response)
            case .refused(let refusal):
                isCloseQueued = true
                return .refused(response: refusal.response, reason: refusal.description)
            }
        }
    }
}
