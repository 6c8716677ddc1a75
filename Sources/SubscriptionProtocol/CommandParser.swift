import SubscriptionWire

/// The server side of the line protocol, versions 1.0 and 1.1 (docs/PROTOCOL.md, Commands): turns the bytes a client
/// sends into ``Command`` values.
///
/// A byte-level state machine over one growable `[UInt8]` buffer with a read index and a write index
/// (after nats-server `parser.go` and swift-nio-extras `LineBasedFrameDecoder`). Feed it bytes with
/// ``append(_:)`` or ``withWritableTail(minimumCapacity:_:)``, then call ``next()`` until it returns nil.
///
/// The verbs it parses: `HELLO`, `CREATE`, `REMOVE`, `SUB`, `UNSUB`, `PUB`, `SEND`, `LIST`, `STATS`, `PING`, `QUIT`
/// (protocol 1.0), and what 1.1 adds: `GET`, `CREATE ... retain`, `LIST ... kind`, `SUB ... group=` and the info
/// pairs of `PUB`. It checks the form of each command and its names; whether the session may run it (authentication,
/// a user's rights, `$SYS.` numbers) and what it does are the server's.
///
/// How it reads the stream (docs/PROTOCOL.md, Transport):
/// - A line ends in LF; one CR right before the LF is dropped. The parser remembers how far it has scanned a
///   partial line for LF, so no byte is scanned twice. Arguments are index ranges into the buffer; a `String` is
///   made only for a validated name or a short text, never for the whole line.
/// - Verbs are case-insensitive ASCII. Arguments are separated by one or more spaces (only 0x20); spaces at the
///   start and end of a line are ignored. A blank line (only spaces and CRs) is skipped: no command, no error.
/// - `key=value` arguments (`name=`, `token=`, `from=`, `group=`) and the options `retain` and `kind` are matched
///   case-sensitively, in lower case.
/// - A line over ``ProtocolLimits/maxLine`` bytes (not counting LF and CR) is `TOOBIG` and closes the
///   connection. It is reported as soon as more than `maxLine` bytes are buffered with no LF.
/// - An unknown verb is `UNKNOWN` (the message quotes at most 32 bytes of it, control bytes as `?`). Missing or
///   extra arguments, an unknown `key=` or option, or a key given twice are `PROTO` and the connection stays open.
///   Arguments are checked in that order: first their count and form (`PROTO`), then numbers and patterns (`NAME`,
///   with the `Names.Problem` description: `invalid number 'a..b': has an empty token (...)`).
///
/// The commands (docs/PROTOCOL.md, Commands):
/// - `HELLO [name=<client-name>] [token=<secret>]`: either key in any order, each at most once. A client name is
///   1 to 64 bytes of valid UTF-8 with no space or control byte; a token is at least 1 byte of valid UTF-8 with
///   no space or control byte; otherwise `PROTO` (the token is never quoted in the message).
/// - `SUB <pattern> [from=<client-name>] [group=<group-name>]`: either key in any order, each at most once; both
///   values follow the client-name rule (`PROTO` otherwise).
/// - `CREATE <number> [retain]`, `LIST [<pattern> [kind]]` (a lone argument is always the pattern), `REMOVE
///   <number>`, `GET <number>`, `UNSUB <pattern>`, `STATS`, `QUIT`: other argument counts, or another word where
///   `retain` or `kind` may stand, are `PROTO`. `GET` takes a number, not a pattern.
/// - `PING [<text>]`: the text is the rest of the line after the verb and the spaces that follow it, kept as is
///   (inner and trailing spaces included); nothing there means no text.
/// - `SEND <number> <text>`: the text is everything after the ONE space that follows the number, to the end of
///   the line (CR dropped), so `SEND N  x` sends `" x"` and `SEND N ` sends an empty text. `SEND N` with no
///   space after the number is `PROTO`. A text over ``ProtocolLimits/maxPayload`` bytes is `TOOBIG` and closes.
/// - `PUB <number> <nbytes>[ <key>=<value>...]` LF, then exactly nbytes bytes (any bytes, LF included), then LF or
///   CR LF. nbytes must be ASCII digits, else `PROTO` and the connection stays open with nothing more consumed (the
///   bytes after that line are read as commands). nbytes over `maxPayload`, however many digits it has, is
///   `TOOBIG` and closes. If the bytes after the payload are not LF or CR LF, that is `PROTO` and closes ("no LF
///   after a payload"). The number and the info pairs (``InfoPair``: at most 16, no reserved key, no key twice;
///   docs/PROTOCOL.md, Info pairs) are checked only after the payload is consumed, so an invalid number is `NAME`,
///   a bad pair `PROTO`, the stream stays in sync and the connection open. The payload is returned as a slice of
///   the buffer, not copied.
/// - After a failure whose `closesConnection` is true the parser is finished: ``next()`` returns nil forever
///   and bytes appended later are dropped.
///
/// Memory: consumed bytes are dropped, and the unread ones moved to the front of the buffer, only inside
/// ``append(_:)`` and ``withWritableTail(minimumCapacity:_:)``, reusing the buffer's capacity. When the caller
/// drains ``next()`` until nil before each append, the buffer never holds more than
/// `maxLine + maxPayload + 4` bytes plus what that append adds (a partial `PUB` line plus its partial payload).
public struct CommandParser {
    /// The limits in force; settable at any time (a configuration reload). A `PUB` whose header was already
    /// accepted keeps the payload size it announced.
    public var limits: ProtocolLimits

    /// The bytes received and not yet consumed (``InputBuffer``: `input.bytes[input.readIndex..<input.writeIndex]`
    /// are unread). While a payload is awaited, `input.readIndex` is the start of its `PUB` line.
    var input = InputBuffer()
    /// How many bytes after `readIndex` are known to hold no LF (while a line is awaited).
    var scanned = 0
    /// What the parser waits for.
    var state = State.awaitingLine

    /// What the parser waits for next.
    enum State {
        /// A command line.
        case awaitingLine
        /// The payload of the `PUB` whose line starts at `readIndex`.
        case awaitingPayload(PendingPublish)
        /// Nothing: a failure closed the connection.
        case finished
    }

    /// A `PUB` line that was accepted; offsets are relative to `readIndex` so compaction keeps them valid.
    struct PendingPublish {
        /// Where the number starts.
        var numberOffset: Int
        /// The number's length in bytes.
        var numberCount: Int
        /// Where the payload starts (just after the LF of the `PUB` line).
        var payloadOffset: Int
        /// The announced payload size.
        var payloadCount: Int
    }

    /// The info pairs of the `PUB` whose payload is awaited, and the error to answer once it is consumed instead.
    /// Kept out of ``State`` so that the state stays plain data (no reference counting when it is copied, on every
    /// command); set only for a `PUB` that has pairs (or bad ones), and cleared when its payload is taken.
    var pendingInfo: [InfoPair] = []
    var pendingInfoError: ProtocolError?
    /// The numbers of the last `PUB`s, checked: a `PUB` to the same bytes reuses its String.
    var numberCache = NumberCache()
    /// The verb of the line that the latest `.failure` of ``next()`` came from; nil when the line's first word is no
    /// verb (`UNKNOWN`). The server answers an unauthenticated session's malformed command by it: `AUTH`, unless the
    /// verb is one allowed before authentication.
    public internal(set) var failedVerb: Verb?

    /// Makes an empty parser enforcing `limits`.
    public init(limits: ProtocolLimits = ProtocolLimits()) {
        self.limits = limits
    }

    /// The bytes held and not yet consumed by ``next()`` (a pending `PUB` line included), for memory accounting.
    public var bufferedByteCount: Int { input.writeIndex - input.readIndex }

    /// The bytes of storage the parser holds (at least ``bufferedByteCount``), for memory accounting.
    public var bufferCapacity: Int { input.bytes.count }

    /// True once a failure closed the connection: ``next()`` returns nil from now on.
    public var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    /// The next complete command, `.failure` for a malformed one, nil when more bytes are needed.
    /// After a failure whose `closesConnection` is true the parser is finished and returns nil forever.
    public mutating func next() -> Result<Command, ProtocolError>? {
        while true {
            switch state {
            case .finished:
                return nil
            case .awaitingPayload(let pending):
                return takePayload(pending)
            case .awaitingLine:
                if let publish = takeSimplePublish() { return .success(publish) }
                guard let line = takeLine() else { return nil }
                switch line {
                case .failure(let error):
                    return fail(error)
                case .success(let span):
                    switch LineParser(buffer: input.bytes, limits: limits).parseLine(span.content) {
                    case .blank:
                        input.readIndex = span.end
                        continue
                    case .command(let command):
                        input.readIndex = span.end
                        return .success(command)
                    case .failure(let error):
                        if error.closesConnection { return fail(error) }
                        failedVerb = LineParser(buffer: input.bytes, limits: limits).verb(of: span.content)
                        input.readIndex = span.end
                        return .failure(error)
                    case .publishHeader(let number, let count, let info):
                        state = .awaitingPayload(
                            PendingPublish(
                                numberOffset: number.lowerBound - input.readIndex,
                                numberCount: number.count,
                                payloadOffset: span.end - input.readIndex,
                                payloadCount: count
                            ))
                        switch info {
                        case .success(let pairs): if !pairs.isEmpty { pendingInfo = pairs }
                        case .failure(let error): pendingInfoError = error
                        }
                    }
                }
            }
        }
    }

    /// Ends the parse with `error`: drops every buffered byte and returns the failure.
    mutating func fail(_ error: ProtocolError) -> Result<Command, ProtocolError> {
        state = .finished
        input.readIndex = 0
        input.writeIndex = 0
        scanned = 0
        return .failure(error)
    }
}
