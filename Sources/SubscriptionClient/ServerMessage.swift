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

/// A message received through a subscription (a `MSG` push).
public struct ReceivedMessage: Sendable, Equatable {
    /// The number the message was published to.
    public var number: String
    /// The payload, byte for byte.
    public var payload: [UInt8]
    /// The publisher's `HELLO name=`, when it named itself.
    public var from: String?
    /// Every `key=value` of the `MSG` line, `from` included; unknown keys are kept here too.
    public var fields: [String: String]

    /// Makes a message; `from` is taken from `fields["from"]`.
    public init(number: String, payload: [UInt8], fields: [String: String] = [:]) {
        self.number = number
        self.payload = payload
        self.from = fields["from"]
        self.fields = fields
    }

    /// The payload as text, or nil when it is not valid UTF-8.
    public var text: String? {
        String(validating: payload, as: UTF8.self)
    }
}
