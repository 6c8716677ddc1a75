/// One reply of docs/PROTOCOL.md (Replies), as a client reads it.
enum Reply: Equatable, CustomStringConvertible {
    /// `+<text>`: the whole line after the `+`, e.g. `OK created`, `OK 1`, `PONG`.
    case status(String)
    /// `-ERR <CODE> <text>`.
    case error(code: String, message: String)
    /// `*<n>` and the n lines that follow it.
    case list([String])

    /// `+OK` or `+OK <text>`.
    static func ok(_ text: String? = nil) -> Reply { .status(text.map { "OK \($0)" } ?? "OK") }

    /// The error code, when this is an error reply.
    var errorCode: String? {
        if case .error(let code, _) = self { return code }
        return nil
    }

    var description: String {
        switch self {
        case .status(let text): return "+\(text)"
        case .error(let code, let message): return "-ERR \(code) \(message)"
        case .list(let lines): return "*\(lines.count) \(lines)"
        }
    }
}

/// One push of docs/PROTOCOL.md, Pushes (`MSG`, `GONE`, or a verb the tests do not know).
enum Push: Equatable, CustomStringConvertible {
    /// `MSG <number> <nbytes>[ key=value...]` and its payload.
    case message(Message)
    /// `GONE <number>`.
    case gone(String)
    /// Any other push line.
    case other(String)

    /// The message, when this is a `MSG` push.
    var message: Message? {
        if case .message(let message) = self { return message }
        return nil
    }

    var description: String {
        switch self {
        case .message(let message): return message.description
        case .gone(let number): return "GONE \(number)"
        case .other(let line): return line
        }
    }
}

/// A delivered message: `MSG <number> <nbytes>[ key=value...]` LF payload LF.
struct Message: Equatable, CustomStringConvertible {
    /// The number it was published to.
    var number: String
    /// Exactly the payload bytes.
    var payload: [UInt8]
    /// The `key=value` pairs after nbytes, e.g. `from`.
    var attributes: [String: String]

    /// A message as the server should frame it: `number`, `payload`, and `from=` when given.
    init(_ number: String, _ payload: [UInt8], from: String? = nil) {
        self.number = number
        self.payload = payload
        self.attributes = from.map { ["from": $0] } ?? [:]
    }

    /// A message whose payload is the UTF-8 of `text`.
    init(_ number: String, text: String, from: String? = nil) {
        self.init(number, Array(text.utf8), from: from)
    }

    /// A message exactly as parsed from the wire.
    init(number: String, payload: [UInt8], attributes: [String: String]) {
        self.number = number
        self.payload = payload
        self.attributes = attributes
    }

    /// The payload as UTF-8 text.
    var text: String { String(decoding: payload, as: UTF8.self) }

    /// The `from=` attribute, nil when the publisher did not name itself.
    var from: String? { attributes["from"] }

    var description: String {
        let keys = attributes.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
        return "MSG \(number) \(payload.count)\(keys) \(describeBytes(payload, limit: 60))"
    }
}
