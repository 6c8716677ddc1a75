import SubscriptionWire

/// A complete control line in the buffer.
struct NATSLineSpan {
    /// The line's bytes, without LF and a CR right before it.
    var content: Range<Int>
    /// One past the LF.
    var end: Int
}

/// What one control line turned out to be.
enum NATSLineOutcome {
    /// Only spaces, tabs and CRs: skipped.
    case blank
    /// A frame without a body.
    case frame(NATSServerFrame)
    /// A malformed line.
    case failure(NATSProtocolError)
    /// A valid `MSG`/`HMSG` line; its body follows (``NATSParser/PendingMessage/bodyOffset`` is set by the caller).
    case messageHeader(NATSParser.PendingMessage)
}

/// Up to six argument ranges of a control line, without an allocation per line.
struct NATSArguments {
    private var storage: (Range<Int>, Range<Int>, Range<Int>, Range<Int>, Range<Int>, Range<Int>) =
        (0..<0, 0..<0, 0..<0, 0..<0, 0..<0, 0..<0)
    /// How many arguments the line has (more than six count, but only six are kept).
    private(set) var count = 0

    static let capacity = 6

    mutating func append(_ range: Range<Int>) {
        switch count {
        case 0: storage.0 = range
        case 1: storage.1 = range
        case 2: storage.2 = range
        case 3: storage.3 = range
        case 4: storage.4 = range
        case 5: storage.5 = range
        default: break
        }
        count += 1
    }

    subscript(index: Int) -> Range<Int> {
        switch index {
        case 0: return storage.0
        case 1: return storage.1
        case 2: return storage.2
        case 3: return storage.3
        case 4: return storage.4
        case 5: return storage.5
        default: preconditionFailure("argument \(index) of at most \(Self.capacity)")
        }
    }
}

extension NATSParser {
    /// Finds the next complete line, scanning only bytes not scanned before. Nil when more bytes are needed.
    mutating func takeLine() -> Result<NATSLineSpan, NATSProtocolError>? {
        let maxLine = limits.maxControlLine
        switch ReadBuffer.nextLine(
            in: input.bytes, from: input.readIndex, to: input.writeIndex, scanned: &scanned, maxLine: maxLine)
        {
        case .line(let content, let end): return .success(NATSLineSpan(content: content, end: end))
        case .incomplete: return nil
        case .tooLong: return .failure(.lineTooLong(limit: maxLine))
        }
    }

    /// Parses the control line `buffer[content]`.
    func parseLine(_ content: Range<Int>) -> NATSLineOutcome {
        var position = content.lowerBound
        skipBlanks(&position, content.upperBound)
        guard position < content.upperBound else { return .blank }
        let opStart = position
        while position < content.upperBound, !isBlank(input.bytes[position]) { position += 1 }
        let op = opStart..<position
        skipBlanks(&position, content.upperBound)
        let rest = position..<content.upperBound
        if matches(op, "msg") { return parseMessage(rest, headers: false) }
        if matches(op, "hmsg") { return parseMessage(rest, headers: true) }
        if matches(op, "ping") { return noArguments(rest, .ping, "PING") }
        if matches(op, "pong") { return noArguments(rest, .pong, "PONG") }
        if matches(op, "+ok") { return noArguments(rest, .ok, "+OK") }
        if matches(op, "-err") { return .frame(.error(errorText(rest))) }
        if matches(op, "info") {
            let info: Result<NATSServerInfo, NATSProtocolError> = input.bytes.withUnsafeBytes { bytes in
                do throws(NATSProtocolError) {
                    return .success(try NATSServerInfo(json: UnsafeRawBufferPointer(rebasing: bytes[rest])))
                } catch {
                    return .failure(error)
                }
            }
            switch info {
            case .success(let info): return .frame(.info(info))
            case .failure(let error): return .failure(error)
            }
        }
        return .failure(.unknownOperation(Self.quoted(input.bytes[op])))
    }

    /// `MSG <subject> <sid> [reply] <size>` or `HMSG <subject> <sid> [reply] <header size> <total size>`.
    private func parseMessage(_ rest: Range<Int>, headers: Bool) -> NATSLineOutcome {
        let operation = headers ? "HMSG" : "MSG"
        var arguments = NATSArguments()
        var position = rest.lowerBound
        while position < rest.upperBound {
            let start = position
            while position < rest.upperBound, !isBlank(input.bytes[position]) { position += 1 }
            arguments.append(start..<position)
            skipBlanks(&position, rest.upperBound)
        }
        let sizes = headers ? 2 : 1
        guard arguments.count == 2 + sizes || arguments.count == 3 + sizes else {
            return .failure(
                .malformedArguments(
                    operation: operation, reason: "\(arguments.count) arguments, expected \(2 + sizes) or \(3 + sizes)")
            )
        }
        guard let sid = decimal(arguments[1]) else {
            return .failure(.malformedArguments(operation: operation, reason: "the sid is not a number"))
        }
        let hasReply = arguments.count == 3 + sizes
        let sizeIndex = hasReply ? 3 : 2
        guard let first = decimal(arguments[sizeIndex]) else {
            return .failure(.malformedArguments(operation: operation, reason: "a size is not a number"))
        }
        var headerCount: Int?
        var total = Int(clamping: first)
        if headers {
            guard let second = decimal(arguments[sizeIndex + 1]) else {
                return .failure(.malformedArguments(operation: operation, reason: "a size is not a number"))
            }
            total = Int(clamping: second)
            guard first <= second else {
                return .failure(
                    .malformedArguments(
                        operation: operation, reason: "header size \(first) is larger than total size \(second)"))
            }
            guard first >= NATSHeaderBlock.version.count + 4 else {
                return .failure(.malformedArguments(operation: operation, reason: "header size \(first) is too small"))
            }
            headerCount = Int(first)
        }
        guard total <= limits.maxPayload else {
            return .failure(.payloadTooBig(size: total, limit: limits.maxPayload))
        }
        let subject = arguments[0]
        let reply = hasReply ? arguments[2] : nil
        return .messageHeader(
            PendingMessage(
                subject: (subject.lowerBound - input.readIndex, subject.count),
                reply: reply.map { ($0.lowerBound - input.readIndex, $0.count) },
                sid: sid, headerCount: headerCount, totalCount: total, bodyOffset: 0))
    }

    private func noArguments(_ rest: Range<Int>, _ frame: NATSServerFrame, _ operation: String) -> NATSLineOutcome {
        rest.isEmpty
            ? .frame(frame) : .failure(.malformedArguments(operation: operation, reason: "unexpected argument"))
    }

    /// The text of `-ERR 'text'` without its quotes (as it is when it has none).
    private func errorText(_ rest: Range<Int>) -> String {
        var range = rest
        while range.upperBound > range.lowerBound, isBlank(input.bytes[range.upperBound - 1]) {
            range = range.lowerBound..<(range.upperBound - 1)
        }
        if range.count >= 2, input.bytes[range.lowerBound] == UInt8(ascii: "'"),
            input.bytes[range.upperBound - 1] == UInt8(ascii: "'")
        {
            range = (range.lowerBound + 1)..<(range.upperBound - 1)
        }
        return String(decoding: input.bytes[range], as: UTF8.self)
    }

    /// A decimal number of at most 19 digits (below 10^19, so it fits in UInt64); nil otherwise.
    func decimal(_ range: Range<Int>) -> UInt64? {
        ASCIIDecimal.value(of: input.bytes[range])
    }

    /// True when `buffer[range]` is `word` (lower-case ASCII) in any case.
    private func matches(_ range: Range<Int>, _ word: StaticString) -> Bool {
        guard range.count == word.utf8CodeUnitCount else { return false }
        var offset = 0
        for index in range {
            let byte = input.bytes[index]
            let lowered = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            if lowered != word.utf8Start[offset] { return false }
            offset += 1
        }
        return true
    }

    private func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    private func skipBlanks(_ position: inout Int, _ end: Int) {
        while position < end, isBlank(input.bytes[position]) { position += 1 }
    }

    /// At most 32 bytes of `bytes`, control bytes and non-ASCII as `?`, for a message.
    static func quoted(_ bytes: ArraySlice<UInt8>) -> String {
        String(decoding: bytes.prefix(32).map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }
}
