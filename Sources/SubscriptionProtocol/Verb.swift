/// The command verbs, recognized case-insensitively from raw bytes. Public for ``CommandParser/failedVerb``: the
/// server answers a malformed command of an unauthenticated session by its verb (docs/PROTOCOL.md, Order of checks).
public enum Verb: CaseIterable, Sendable {
    // In the order they are tried: the busiest first.
    case pub, send, ping, sub, unsub, get, hello, create, remove, list, stats, quit

    /// The verb as written in docs/PROTOCOL.md, Commands.
    var spelling: StaticString {
        switch self {
        case .pub: return "PUB"
        case .send: return "SEND"
        case .ping: return "PING"
        case .sub: return "SUB"
        case .unsub: return "UNSUB"
        case .get: return "GET"
        case .hello: return "HELLO"
        case .create: return "CREATE"
        case .remove: return "REMOVE"
        case .list: return "LIST"
        case .stats: return "STATS"
        case .quit: return "QUIT"
        }
    }

    /// The command's syntax, quoted in `PROTO` errors.
    var usage: String {
        switch self {
        case .pub: return "PUB <number> <nbytes> [<key>=<value>...]"
        case .send: return "SEND <number> <text>"
        case .ping: return "PING [<text>]"
        case .sub: return "SUB <pattern> [from=<client-name>] [group=<group-name>]"
        case .unsub: return "UNSUB <pattern>"
        case .get: return "GET <number>"
        case .hello: return "HELLO [name=<client-name>] [token=<secret>]"
        case .create: return "CREATE <number> [retain]"
        case .remove: return "REMOVE <number>"
        case .list: return "LIST [<pattern> [kind]]"
        case .stats: return "STATS"
        case .quit: return "QUIT"
        }
    }

    /// Each verb packed into an integer: its length in the top byte, then its bytes in upper case, one per 8
    /// bits (so a word of up to 7 bytes has exactly one key and a leading NUL byte cannot alias a verb).
    private static let keys: [(key: UInt64, verb: Verb)] = allCases.map { verb in
        let spelling = verb.spelling
        let bytes = UnsafeBufferPointer(start: spelling.utf8Start, count: spelling.utf8CodeUnitCount)
        return (pack(bytes[...]), verb)
    }

    /// Packs up to 7 bytes and their count into an integer, ASCII letters upper-cased.
    private static func pack<Bytes: Collection>(_ bytes: Bytes) -> UInt64 where Bytes.Element == UInt8 {
        var key: UInt64 = 0
        for byte in bytes {
            let upper = byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") ? byte - 0x20 : byte
            key = key << 8 | UInt64(upper)
        }
        return key | UInt64(bytes.count) << 56
    }

    /// The verb spelled by `bytes[range]` in any ASCII case, or nil.
    static func find(_ bytes: [UInt8], _ range: Range<Int>) -> Verb? {
        guard range.count <= 7 else { return nil }
        let key = pack(bytes[range])
        for entry in keys where entry.key == key { return entry.verb }
        return nil
    }
}
