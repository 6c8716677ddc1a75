import SubscriptionWire

/// The server side of RFC 6455's framing: turns the bytes a client sends after the upgrade into
/// ``WebSocketEvent`` values. A plain value: no sockets, no clock; the server feeds it and acts on its events.
///
/// Feed it bytes with ``append(_:)`` or ``withWritableTail(minimumCapacity:_:)``, then call ``next()`` until it
/// returns nil. Whatever way the bytes are cut into appends, the events are the same once data events are joined.
///
/// What it enforces (section 5): every client frame masked; no RSV bit (no extension is ever agreed); no reserved
/// opcode; control frames (close, ping, pong) final and at most 125 bytes; a continuation only inside a fragmented
/// message and a new text or binary frame only outside one; a 64-bit length with its top bit clear; a text message
/// UTF-8 across its fragments, and not ending inside a character; a close frame empty or with an allowed code
/// (``WebSocketCloseCode/isAllowedInCloseFrame``) and a UTF-8 reason; data frames and messages within
/// ``limits``. Each check is made as soon as the bytes it needs are here, in that order, so a bad header is refused
/// without waiting for its payload. Lengths in more bytes than needed (126 in 64 bits) are accepted, as most
/// servers do. Each violation is one ``WebSocketEvent/failure(_:)`` with its close code (``WebSocketViolation``).
///
/// Data is handed on as it arrives: a data frame's payload is unmasked in place and returned in as many
/// ``WebSocketEvent/data(_:)`` events as it took appends, never gathered, so a message may be as large as the limits
/// allow while the decoder holds only the bytes of one header or one control frame. In a text message that turns
/// out not to be UTF-8, the bytes before the first bad one are still handed on, then the failure comes.
///
/// After a failure or a close frame the decoder is finished: ``next()`` returns nil and appended bytes are dropped.
///
/// Memory: when the caller drains ``next()`` until nil before each append, the decoder never holds more than
/// ``maxBufferedBytes`` unread bytes plus what that append adds.
public struct WebSocketFrameDecoder {
    /// The most bytes the decoder keeps unread after ``next()`` returned nil: one control frame's 6-byte header and
    /// its 125 payload bytes, not yet complete (a data frame's header takes at most 14).
    public static let maxBufferedBytes = 6 + 125

    /// The sizes in force; settable at any time (a configuration reload). A frame whose header was already accepted
    /// keeps the size it announced.
    public var limits: WebSocketLimits

    /// The bytes received and not yet consumed by ``next()``.
    var input = InputBuffer()
    /// The storage of ``input``; bytes `readIndex..<writeIndex` are unread.
    var buffer: [UInt8] {
        get { input.bytes }
        _modify { yield &input.bytes }
    }
    /// The first byte not consumed by ``next()``.
    var readIndex: Int {
        get { input.readIndex }
        set { input.readIndex = newValue }
    }
    /// One past the last byte received.
    var writeIndex: Int {
        get { input.writeIndex }
        set { input.writeIndex = newValue }
    }
    /// What the decoder waits for.
    var state = State.awaitingHeader
    /// The data message whose frames are arriving, nil between messages.
    var message: OpenMessage?

    /// What the decoder waits for next.
    enum State {
        /// A frame header.
        case awaitingHeader
        /// More of a data frame's payload.
        case dataPayload(DataFrame)
        /// A whole control frame's payload (it is handed on in one event).
        case controlPayload(opcode: WebSocketOpcode, count: Int, mask: UInt32)
        /// A failure to report after the data before it was handed on.
        case failing(WebSocketViolation)
        /// Nothing: a failure or a close frame ended the stream.
        case finished
    }

    /// The data frame whose payload is arriving.
    struct DataFrame {
        /// Payload bytes not yet handed on.
        var remaining: Int
        /// The masking key, its first byte in the lowest bits.
        var mask: UInt32
        /// Payload bytes already handed on: where the masking key stands.
        var offset: Int
        /// True when the frame has FIN: its message ends with it.
        var isFinal: Bool
    }

    /// The data message in progress.
    struct OpenMessage {
        /// True for a text message, whose bytes are checked as UTF-8.
        var isText: Bool
        /// The payload bytes its frames announced so far.
        var payloadCount: Int
        /// The UTF-8 check of a text message so far.
        var utf8 = UTF8StreamValidator()
    }

    /// Makes an empty decoder enforcing `limits`.
    public init(limits: WebSocketLimits) {
        self.limits = limits
    }

    /// The bytes held and not yet consumed by ``next()``, for memory accounting.
    public var bufferedByteCount: Int { input.count }

    /// The bytes of storage the decoder holds (at least ``bufferedByteCount``), for memory accounting.
    public var bufferCapacity: Int { input.capacity }

    /// True once a failure or a close frame ended the stream: ``next()`` returns nil from now on.
    public var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    /// True while a fragmented data message is open (its final frame has not arrived): a server closing now knows
    /// the client was cut off mid-message.
    public var isInsideMessage: Bool { message != nil }

    /// The next event, or nil when more bytes are needed (or the decoder is finished).
    public mutating func next() -> WebSocketEvent? {
        while true {
            switch state {
            case .finished:
                return nil
            case .failing(let violation):
                return fail(violation)
            case .awaitingHeader:
                switch takeHeader() {
                case .needMore: return nil
                case .failure(let violation): return fail(violation)
                case .frame: continue
                }
            case .dataPayload(let frame):
                if let event = takeData(frame) { return event }
                if case .dataPayload = state { return nil }
            case .controlPayload(let opcode, let count, let mask):
                return takeControl(opcode: opcode, count: count, mask: mask)
            }
        }
    }

    /// Ends the stream with `violation`: drops every buffered byte and returns the failure.
    mutating func fail(_ violation: WebSocketViolation) -> WebSocketEvent {
        finish()
        return .failure(violation)
    }

    /// Ends the stream: nothing more is read or returned.
    mutating func finish() {
        state = .finished
        message = nil
        readIndex = 0
        writeIndex = 0
    }
}
