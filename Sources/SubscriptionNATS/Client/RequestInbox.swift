/// Request/reply over one wildcard subscription (`_INBOX.<random>.*`): each request gets the next token as the last
/// subject token of its reply subject, and a reply is matched to its request by that token.
struct RequestInbox {
    /// `_INBOX.<random>.`
    let prefix: String
    /// The wildcard subscription's sid.
    let sid: UInt64
    private var nextToken: UInt64 = 1
    private var pending: [UInt64: @Sendable (Result<NATSMessage, NATSError>) -> Void] = [:]

    init(prefix: String, sid: UInt64) {
        self.prefix = prefix
        self.sid = sid
    }

    /// Requests waiting for their reply.
    var pendingCount: Int { pending.count }

    /// Registers a request; returns its token and reply subject.
    mutating func add(_ completion: @escaping @Sendable (Result<NATSMessage, NATSError>) -> Void) -> (UInt64, String) {
        let token = nextToken
        nextToken += 1
        pending[token] = completion
        return (token, prefix + String(token))
    }

    /// Takes the completion of request `token`, if it still waits.
    mutating func take(_ token: UInt64) -> (@Sendable (Result<NATSMessage, NATSError>) -> Void)? {
        pending.removeValue(forKey: token)
    }

    /// Takes the completion a reply on `subject` answers (nil for an unknown or finished token).
    mutating func take(replyOn subject: String) -> (@Sendable (Result<NATSMessage, NATSError>) -> Void)? {
        guard subject.hasPrefix(prefix), let token = UInt64(subject.dropFirst(prefix.count)) else { return nil }
        return take(token)
    }

    /// Takes the completions of every waiting request (the caller fails them, outside any access to the inbox:
    /// a completion may make a new request).
    mutating func takeAll() -> [@Sendable (Result<NATSMessage, NATSError>) -> Void] {
        let waiting = pending.sorted { $0.key < $1.key }.map(\.value)
        pending = [:]
        return waiting
    }
}
