import SubscriptionWire

/// The client side of the NATS protocol: turns the bytes a server sends into ``NATSServerFrame`` values. Pure: no
/// sockets, no Dispatch.
///
/// A byte-level state machine over one growable buffer with a read and a write index, like subd's own
/// `CommandParser` (after nats-server `parser.go`). Feed it with ``append(_:)`` or
/// ``withWritableTail(minimumCapacity:_:)``, then call ``next()`` until it returns nil.
///
/// How it reads the stream:
/// - A control line ends in CRLF (a bare LF is accepted too); the operation is case-insensitive; arguments are
///   separated by one or more spaces or tabs (the server writes `MSG subj 1  26` for a message without reply).
///   No byte is scanned twice for the end of a partial line.
/// - `INFO <json>`, `MSG <subject> <sid> [reply] <size>`, `HMSG <subject> <sid> [reply] <header size> <total size>`,
///   `PING`, `PONG`, `+OK`, `-ERR '<text>'`. After a `MSG`/`HMSG` line come exactly its size in bytes, then CRLF.
///   An `HMSG`'s first `header size` bytes are its header block (``NATSHeaders``, status line included).
/// - Limits: a control line over ``Limits/maxControlLine`` bytes, or a message over ``Limits/maxPayload`` (headers
///   included), is an error. Each `INFO` sets `maxPayload` to the server's `max_payload`.
/// - Every error ends the parse (``NATSProtocolError``): ``next()`` returns nil from then on and later bytes are
///   dropped; the client drops the connection.
///
/// Memory: consumed bytes are dropped (the unread ones moved to the front) only when bytes are appended, so the
/// buffer holds at most one control line and one message plus what one append adds, when ``next()`` is drained
/// before each append.
public struct NATSParser {
    /// How much one frame may hold.
    public struct Limits: Equatable, Sendable {
        /// The longest control line, without its CRLF (an `INFO` with many `connect_urls` is the longest).
        public var maxControlLine: Int
        /// The largest message, headers and payload together.
        public var maxPayload: Int

        /// Limits: 64 KiB for a line, and the server's default `max_payload` until an `INFO` tells.
        public init(maxControlLine: Int = 65_536, maxPayload: Int = NATSServerInfo.defaultMaxPayload) {
            self.maxControlLine = maxControlLine
            self.maxPayload = maxPayload
        }
    }

    /// The limits in force (a message whose line was accepted keeps the size it announced).
    public var limits: Limits

    /// The bytes received and not yet consumed (``InputBuffer``: `input.bytes[input.readIndex..<input.writeIndex]`
    /// are unread). While a payload is awaited, `input.readIndex` is the start of its `MSG`/`HMSG` line.
    var input = InputBuffer()
    /// How many bytes after `readIndex` are known to hold no LF (while a line is awaited).
    var scanned = 0
    /// What the parser waits for.
    var state = State.awaitingLine

    /// What the parser waits for next.
    enum State {
        /// A control line.
        case awaitingLine
        /// The payload of the message whose line starts at `readIndex`.
        case awaitingPayload(PendingMessage)
        /// Nothing: an error ended the parse.
        case finished
    }

    /// An accepted `MSG`/`HMSG` line. Offsets are relative to `readIndex`, so compaction keeps them valid.
    struct PendingMessage {
        /// The subject's offset and length.
        var subject: (offset: Int, count: Int)
        /// The reply subject's offset and length; nil without one.
        var reply: (offset: Int, count: Int)?
        /// The subscription id.
        var sid: UInt64
        /// The header block's size; nil for a `MSG`.
        var headerCount: Int?
        /// Headers and payload together.
        var totalCount: Int
        /// Where the header block (or payload) starts: just after the line's LF.
        var bodyOffset: Int
    }

    /// An empty parser with `limits`.
    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// The bytes held and not consumed (a partial frame), for memory accounting.
    public var bufferedByteCount: Int { input.writeIndex - input.readIndex }

    /// True once an error ended the parse.
    public var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    /// The next complete frame, a failure, or nil when more bytes are needed (or the parse has ended).
    public mutating func next() -> Result<NATSServerFrame, NATSProtocolError>? {
        while true {
            switch state {
            case .finished:
                return nil
            case .awaitingPayload(let pending):
                return takeBody(pending)
            case .awaitingLine:
                guard let line = takeLine() else { return nil }
                switch line {
                case .failure(let error):
                    return fail(error)
                case .success(let span):
                    switch parseLine(span.content) {
                    case .blank:
                        input.readIndex = span.end
                    case .frame(let frame):
                        input.readIndex = span.end
                        if case .info(let info) = frame { limits.maxPayload = info.maxPayload }
                        return .success(frame)
                    case .failure(let error):
                        return fail(error)
                    case .messageHeader(var pending):
                        pending.bodyOffset = span.end - input.readIndex
                        state = .awaitingPayload(pending)
                    }
                }
            }
        }
    }

    /// Ends the parse with `error`: every buffered byte is dropped.
    mutating func fail(_ error: NATSProtocolError) -> Result<NATSServerFrame, NATSProtocolError> {
        state = .finished
        input.readIndex = 0
        input.writeIndex = 0
        scanned = 0
        input.bytes = []
        return .failure(error)
    }

    /// Starts over with an empty buffer and the same limits (a new connection).
    public mutating func reset() {
        state = .awaitingLine
        input.readIndex = 0
        input.writeIndex = 0
        scanned = 0
        input.bytes.removeAll(keepingCapacity: true)
    }
}
