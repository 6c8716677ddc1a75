/// One frame the server sends to a client.
public enum NATSServerFrame: Equatable, Sendable {
    /// `INFO {json}`: the server's facts, at connect and again when the cluster changes.
    case info(NATSServerInfo)
    /// `MSG` or `HMSG`.
    case message(NATSMessage)
    /// `PING`: the client must answer `PONG`.
    case ping
    /// `PONG`: the answer to the client's oldest unanswered `PING`.
    case pong
    /// `+OK` (only with `verbose: true`, which this client does not ask for).
    case ok
    /// `-ERR '<text>'`, the text without its quotes.
    case error(String)
}
