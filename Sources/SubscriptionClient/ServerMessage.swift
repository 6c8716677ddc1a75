import SubscriptionWire

/// One thing the server sent: a reply to a command, or a push.
public enum ServerMessage: Sendable, Equatable {
    /// The reply to the oldest command still waiting for one.
    case reply(ServerReply)
    /// A `MSG` push: a message published to a number this session subscribed to.
    case message(ReceivedMessage)
    /// A `GONE <number>` push: the number was removed, exact subscriptions to it are gone.
    case gone(number: String)
}

/// A reply line (or list) of the protocol.
public enum ServerReply: Sendable, Equatable {
    /// `+<text>`; `text` is everything after the `+`, e.g. `OK created`, `OK 3` or `PONG`.
    case ok(String)
    /// `-ERR <code> <message>`.
    case error(code: ErrorCode, message: String)
    /// `*<n>` and the n lines that followed it, without their line ends.
    case list([String])
}

/// A message received through a subscription (a `MSG` push): the number, the payload, the server's own keys
/// (`from`, `rev`, `group`) and the publisher's info pairs (docs/PROTOCOL.md, Info pairs).
public struct ReceivedMessage: Sendable, Equatable {
    /// The number the message was published to.
    public var number: String
    /// The payload, byte for byte.
    public var payload: [UInt8]
    /// The publisher's `HELLO name=`, when it named itself (`from=`).
    public var from: String?
    /// The revision of a publication to a retained number (`rev=`), counted from 1.
    public var revision: Int?
    /// The queue group the message was delivered through (`group=`).
    public var group: String?
    /// The publisher's info pairs in the order it gave them, values exactly as sent (by convention a value that
    /// needs other bytes is percent-encoded: see ``InfoPair/percentDecoded(_:)``).
    public var infoPairs: [InfoPair] {
        didSet { info = Self.dictionary(infoPairs) }
    }
    /// The info pairs by key (the notification's `userInfo`), values exactly as sent.
    public private(set) var info: [String: String]

    /// Makes a message.
    public init(
        number: String,
        payload: [UInt8],
        from: String? = nil,
        revision: Int? = nil,
        group: String? = nil,
        info: [InfoPair] = []
    ) {
        self.number = number
        self.payload = payload
        self.from = from
        self.revision = revision
        self.group = group
        self.infoPairs = info
        self.info = Self.dictionary(info)
    }

    /// The payload as text, or nil when it is not valid UTF-8.
    public var text: String? {
        String(validating: payload, as: UTF8.self)
    }

    /// The pairs by key; should a key come twice, its first value.
    private static func dictionary(_ pairs: [InfoPair]) -> [String: String] {
        guard !pairs.isEmpty else { return [:] }
        return Dictionary(pairs.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}
