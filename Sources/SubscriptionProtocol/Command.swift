import SubscriptionWire

/// One parsed client command (docs/PROTOCOL.md, Commands). Numbers and patterns are valid already:
/// the parser reports invalid ones as `NAME` errors, so a `Command` never holds one.
public enum Command: Equatable, Sendable {
    /// `HELLO [name=<client-name>] [token=<secret>]`.
    case hello(name: String?, token: String?)
    /// `CREATE <number> [retain]`: a retained number keeps its latest message (protocol 1.1).
    case create(number: String, retained: Bool)
    /// `REMOVE <number>`.
    case remove(number: String)
    /// `SUB <pattern> [from=<client-name>] [group=<group-name>]` (the group: protocol 1.1 queue groups).
    case subscribe(pattern: String, from: String?, group: String?)
    /// `UNSUB <pattern>`.
    case unsubscribe(pattern: String)
    /// `PUB <number> <nbytes>[ <key>=<value>...]` LF payload LF. The payload is a slice of the parser's buffer, not
    /// a copy; drop it (or copy it) before appending more bytes to the parser, or that append copies the buffer.
    /// The info pairs are checked (``InfoPair``), in the order given.
    case publish(number: String, payload: ArraySlice<UInt8>, info: [InfoPair])
    /// `SEND <number> <text>`: the text as bytes, a slice of the parser's buffer like a `PUB` payload.
    case send(number: String, payload: ArraySlice<UInt8>)
    /// `LIST [<pattern> [kind]]`: with `kind` (protocol 1.1), each line also says `plain` or `retained <rev>`.
    case list(pattern: String?, kinds: Bool)
    /// `GET <number>`: a retained number's current value (protocol 1.1).
    case get(number: String)
    /// `STATS`.
    case stats
    /// `PING [<text>]`.
    case ping(text: String?)
    /// `QUIT`.
    case quit
}
