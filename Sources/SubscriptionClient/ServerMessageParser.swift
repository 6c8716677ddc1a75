import SubscriptionWire

/// An incremental, byte-level parser of what a subd server sends (docs/PROTOCOL.md, Replies and Pushes).
///
/// Feed it bytes in any chunking with ``append(_:)``, then call ``next()`` until it returns nil (more bytes
/// are needed). Lines end in LF, a CR before the LF is dropped. A `*n` list is read whole: its n lines are
/// never taken for pushes. `MSG` payloads may hold any bytes. Push verbs it does not know are skipped, and so
/// are blank lines. After a violation the parser is spent: every later ``next()`` throws the same error.
public struct ServerMessageParser: Sendable {
    /// The longest line accepted by default (bytes, without its LF).
    public static let defaultMaxLineLength = 1 << 20
    /// The largest `MSG` payload accepted by default (bytes).
    public static let defaultMaxPayload = 1 << 30
    /// The most lines a `*n` list may announce.
    public static let maxListCount = 1 << 24

    private enum State: Sendable {
        case line
        case list(remaining: Int, items: [String])
        /// A `MSG` line was read: the message without its payload, and the payload's size.
        case payload(header: ReceivedMessage, count: Int)
        case failed(ClientError)
    }

    private let maxLineLength: Int
    private let maxPayload: Int
    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Where the search for the next LF goes on, so a partial line is never scanned twice.
    private var scanIndex = 0
    private var state = State.line

    /// Makes a parser that refuses lines over `maxLineLength` bytes and payloads over `maxPayload` bytes.
    public init(maxLineLength: Int = defaultMaxLineLength, maxPayload: Int = defaultMaxPayload) {
        self.maxLineLength = maxLineLength
        self.maxPayload = maxPayload
    }

    /// The number of bytes received but not yet parsed into a message.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Adds received bytes straight from a read buffer.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// The next complete message, or nil when more bytes are needed.
    ///
    /// - Throws: ``ClientError/protocolViolation(_:)`` when the bytes break the protocol.
    public mutating func next() throws(ClientError) -> ServerMessage? {
        while true {
            switch state {
            case .failed(let error):
                throw error
            case .payload(var message, let count):
                guard buffer.count - readIndex > count else { return nil }
                guard buffer[readIndex + count] == UInt8(ascii: "\n") else {
                    throw fail("the \(count)-byte payload of MSG \(message.number) is not followed by LF")
                }
                message.payload = Array(buffer[readIndex..<readIndex + count])
                readIndex += count + 1
                scanIndex = readIndex
                state = .line
                return .message(message)
            case .list(let remaining, var items):
                guard let line = try nextLine() else { return nil }
                state = .line  // drops the enum's reference, so `items` grows in place
                items.append(line)
                if remaining == 1 {
                    state = .line
                    return .reply(.list(items))
                }
                state = .list(remaining: remaining - 1, items: items)
            case .line:
                guard let line = try nextLine() else { return nil }
                if let message = try parseLine(line) { return message }
            }
        }
    }

    // MARK: - Lines

    /// Takes the next whole line out of the buffer as text, or returns nil when no LF has come yet.
    private mutating func nextLine() throws(ClientError) -> String? {
        let end = buffer.count
        var lf = scanIndex
        while lf < end && buffer[lf] != UInt8(ascii: "\n") { lf += 1 }
        guard lf < end else {
            scanIndex = end
            if end - readIndex > maxLineLength { throw fail("a line is longer than \(maxLineLength) bytes") }
            return nil
        }
        var lineEnd = lf
        if lineEnd > readIndex && buffer[lineEnd - 1] == UInt8(ascii: "\r") { lineEnd -= 1 }
        if lineEnd - readIndex > maxLineLength { throw fail("a line is longer than \(maxLineLength) bytes") }
        let text = String(validating: buffer[readIndex..<lineEnd], as: UTF8.self)
        readIndex = lf + 1
        scanIndex = readIndex
        guard let text else { throw fail("a line is not valid UTF-8") }
        return text
    }

    /// Interprets a line read outside a list: a reply, the head of a list or MSG, a push, or nothing.
    private mutating func parseLine(_ line: String) throws(ClientError) -> ServerMessage? {
        guard let first = line.utf8.first else { return nil }
        switch first {
        case UInt8(ascii: "+"):
            return .reply(.ok(String(line.dropFirst())))
        case UInt8(ascii: "-"):
            return .reply(try parseError(line))
        case UInt8(ascii: "*"):
            guard let count = Self.parseCount(line.utf8.dropFirst()), count <= Self.maxListCount else {
                throw fail("bad list header '\(line)'")
            }
            if count == 0 { return .reply(.list([])) }
            state = .list(remaining: count, items: [])
            return nil
        default:
            return try parsePush(line)
        }
    }

    private mutating func parseError(_ line: String) throws(ClientError) -> ServerReply {
        let words = Self.words(of: line.dropFirst(), maxSplits: 2)
        guard words.count >= 2, words[0] == "ERR" else { throw fail("bad error reply '\(line)'") }
        guard let code = ErrorCode(rawValue: String(words[1])) else {
            throw fail("unknown error code '\(words[1])' in '\(line)'")
        }
        let message = words.count == 3 ? String(words[2]) : ""
        return .error(code: code, message: message)
    }

    private mutating func parsePush(_ line: String) throws(ClientError) -> ServerMessage? {
        let words = Self.words(of: line[...])
        guard let verb = words.first else { return nil }
        if verb.utf8.elementsEqual("MSG".utf8, by: Self.sameLetter) {
            guard words.count >= 3, let count = Self.parseCount(words[2].utf8) else {
                throw fail("bad MSG line '\(line)'")
            }
            guard count <= maxPayload else { throw fail("a MSG payload of \(count) bytes is over \(maxPayload)") }
            state = .payload(header: Self.header(number: words[1], keys: words.dropFirst(3)), count: count)
            return nil
        }
        if verb.utf8.elementsEqual("GONE".utf8, by: Self.sameLetter) {
            guard words.count == 2 else { throw fail("bad GONE line '\(line)'") }
            return .gone(number: String(words[1]))
        }
        return nil
    }

    /// A `MSG` line's message without its payload. The server's own keys (`from`, `rev`, `group`) are taken; any
    /// other key that follows the info-key rule is an info pair, kept in order; the rest (keys starting with `$`,
    /// words without `=`, and whatever a later server adds) is ignored, as the contract asks.
    private static func header(number: Substring, keys: ArraySlice<Substring>) -> ReceivedMessage {
        var message = ReceivedMessage(number: String(number), payload: [])
        var info: [InfoPair] = []
        for word in keys {
            let bytes = word.utf8
            guard let equals = bytes.firstIndex(of: UInt8(ascii: "=")), equals != bytes.startIndex else { continue }
            let key = bytes[..<equals]
            let value = String(Substring(bytes[bytes.index(after: equals)...]))
            if key.elementsEqual("from".utf8) {
                message.from = message.from ?? value
            } else if key.elementsEqual("rev".utf8) {
                message.revision = message.revision ?? parseCount(value.utf8)
            } else if key.elementsEqual("group".utf8) {
                message.group = message.group ?? value
            } else if (try? InfoPair.checkKey(key)) != nil {
                info.append(InfoPair(key: String(Substring(key)), value: value))
            }
        }
        if !info.isEmpty { message.infoPairs = info }
        return message
    }

    // MARK: - Helpers

    /// Splits a line at spaces, byte by byte. (Splitting Characters would glue a space to a following combining
    /// mark, and numbers may begin with one.)
    private static func words(of line: Substring, maxSplits: Int = .max) -> [Substring] {
        line.utf8.split(separator: UInt8(ascii: " "), maxSplits: maxSplits, omittingEmptySubsequences: true)
            .map { Substring($0) }
    }

    private mutating func fail(_ what: String) -> ClientError {
        let error = ClientError.protocolViolation(what)
        state = .failed(error)
        buffer = []
        readIndex = 0
        scanIndex = 0
        return error
    }

    /// Drops the bytes already parsed once they are at least half of the buffer, so appends stay amortized O(1).
    private mutating func compact() {
        guard readIndex > 0 else { return }
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
        } else if readIndex * 2 >= buffer.count {
            buffer.removeSubrange(0..<readIndex)
        } else {
            return
        }
        scanIndex -= readIndex
        readIndex = 0
    }

    /// A decimal count of 1 to 18 digits (no sign), or nil.
    private static func parseCount(_ digits: some Collection<UInt8>) -> Int? {
        ASCIIDecimal.value(of: digits, maxDigits: 18).map { Int($0) }
    }

    /// Compares an ASCII byte with an upper-case letter, ignoring case.
    private static func sameLetter(_ byte: UInt8, _ upper: UInt8) -> Bool {
        byte == upper || byte == upper + 32
    }
}
