/// The error codes of docs/PROTOCOL.md, Error codes. The raw value is the code as sent on the wire
/// in `-ERR <CODE> <text>`.
public enum ErrorCode: String, Sendable, CaseIterable {
    /// A malformed command: missing or extra arguments, a bad integer, an unknown `key=`, no LF after a
    /// payload. The connection stays open, except after a bad payload frame.
    case proto = "PROTO"
    /// An unknown verb. The connection stays open.
    case unknown = "UNKNOWN"
    /// An invalid number or pattern. The connection stays open.
    case name = "NAME"
    /// No such number. The connection stays open.
    case notFound = "NOTFOUND"
    /// A line or a payload over the configured limit. The connection is closed after the reply.
    case tooBig = "TOOBIG"
    /// Authentication required or failed. The connection stays open.
    case auth = "AUTH"
    /// The session may not do this. The connection stays open.
    case denied = "DENIED"
    /// A configured limit was reached (connections, subscriptions, numbers); the limit says whether the
    /// connection stays open.
    case limit = "LIMIT"
}
