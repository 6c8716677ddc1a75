/// A message the server delivered (`MSG` or `HMSG`) on one of the client's subscriptions.
public struct NATSMessage: Equatable, Sendable {
    /// The subject it was published to.
    public var subject: String
    /// The subscription it came through (one message per matching subscription of the connection).
    public var sid: UInt64
    /// Where to send a reply, if the publisher asked for one.
    public var replyTo: String?
    /// The headers of an `HMSG`; nil for a `MSG`.
    public var headers: NATSHeaders?
    /// The payload (its own storage, not a view of the read buffer).
    public var payload: [UInt8]

    /// A message.
    public init(subject: String, sid: UInt64, replyTo: String? = nil, headers: NATSHeaders? = nil, payload: [UInt8]) {
        self.subject = subject
        self.sid = sid
        self.replyTo = replyTo
        self.headers = headers
        self.payload = payload
    }

    /// The status of a header-only status message (`503`: no responders to a request); nil for a publication.
    public var status: Int? { headers?.status }
}
