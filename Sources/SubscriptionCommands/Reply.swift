import SubscriptionProtocol

/// A command's answer, before it is encoded: every handler returns one (or throws a ``ProtocolError``), and the
/// session encodes it after the pushes the command caused, so a reply is never split by one.
public enum Reply: Equatable, Sendable {
    /// `+OK`, or `+OK <text>`.
    case ok(String? = nil)
    /// `+OK <n>` (written without making a String).
    case count(Int)
    /// `*<n>` and the lines.
    case list([String])
    /// `+PONG`, or `+PONG <text>`.
    case pong(String?)
    /// Nothing now: the reply is queued later (a `HELLO` whose secret is checked off the loop, a clustered command
    /// waiting for the shared buckets), while the session holds every command behind it.
    case later
    /// Nothing now: a publication to a retained number whose value waits for the end-of-turn save; the server
    /// answers it once the value is saved (or could not be), and the session's other commands wait for that.
    case staged

    /// Appends the wire bytes.
    public func encode(into buffer: inout [UInt8]) {
        switch self {
        case .ok(let text): ReplyEncoder.ok(text, into: &buffer)
        case .count(let count): ReplyEncoder.okCount(count, into: &buffer)
        case .list(let lines): ReplyEncoder.list(lines, into: &buffer)
        case .pong(let text): ReplyEncoder.pong(text, into: &buffer)
        case .later, .staged: break
        }
    }
}
