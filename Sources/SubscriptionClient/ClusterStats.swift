/// One node as a `$SYS.cluster.node` event lists it (docs/PROTOCOL.md, System notifications): its name, its state
/// (`up`, `stale` or `lost`), the age of its last report, how many nodes the posting node knows, and its STATS keys
/// with their values, in order.
public struct ClusterNodeReport: Sendable, Equatable {
    /// The node's name (`cluster.node`).
    public let node: String
    /// `up`, `stale` or `lost`.
    public let state: String
    /// Seconds since the node's report came.
    public let ageSeconds: UInt64
    /// How many nodes the posting node knows (the events of one post).
    public let nodes: Int
    /// The node's STATS keys and values, in the order STATS gives them.
    public let stats: [ClusterStatsEntry]

    /// The report an event's fields make (``FlatJSON/fields(of:)``); nil when `node`, `state`, `age_seconds` or
    /// `nodes` is missing.
    public init?(fields: [ClusterStatsEntry]) {
        var head: [String: String] = [:]
        var stats: [ClusterStatsEntry] = []
        for field in fields {
            if ["event", "time", "node", "state", "age_seconds", "nodes"].contains(field.key) {
                head[field.key] = field.value
            } else {
                stats.append(field)
            }
        }
        guard let node = head["node"], let state = head["state"], let age = head["age_seconds"].flatMap(UInt64.init),
            let nodes = head["nodes"].flatMap(Int.init)
        else { return nil }
        self.node = node
        self.state = state
        self.ageSeconds = age
        self.nodes = nodes
        self.stats = stats
    }
}

/// A key and its value, as text.
public struct ClusterStatsEntry: Sendable, Equatable {
    /// The key.
    public let key: String
    /// Its value, as the event wrote it (a number's digits, a string's text).
    public let value: String

    /// An entry.
    public init(_ key: String, _ value: String) {
        self.key = key
        self.value = value
    }
}

/// `subctl stats --cluster`: every node's counters summed.
public enum ClusterStats {
    /// Keys that are not summed: they describe a node, not a count.
    public static let notSummed: Set<String> = ["version", "uptime_seconds"]

    /// The sum of each numeric STATS key over the nodes that are not `lost` (a lost node's report is old: its
    /// connections and subscriptions are no longer there), keys in the order they first appear.
    public static func totals(of reports: [ClusterNodeReport]) -> [ClusterStatsEntry] {
        var order: [String] = []
        var sums: [String: UInt64] = [:]
        for report in reports {
            for entry in report.stats where !notSummed.contains(entry.key) {
                guard let value = UInt64(entry.value) else { continue }
                if sums[entry.key] == nil { order.append(entry.key) }
                let counted = report.state == "lost" ? 0 : value
                sums[entry.key, default: 0] &+= counted
            }
        }
        return order.map { ClusterStatsEntry($0, String(sums[$0] ?? 0)) }
    }
}

/// Reads a flat JSON object, as the daemon's `$SYS.` events are (string, number, boolean and null values; no nested
/// object), keeping its fields' order, which a dictionary would lose.
public enum FlatJSON {
    /// The object's fields, values as text (a string unescaped, anything else as written); nil when `text` is not
    /// one flat object.
    public static func fields(of text: String) -> [ClusterStatsEntry]? {
        var scanner = Scanner(Array(text.utf8))
        guard scanner.take(UInt8(ascii: "{")) else { return nil }
        var fields: [ClusterStatsEntry] = []
        if scanner.take(UInt8(ascii: "}")) { return scanner.atEnd ? fields : nil }
        repeat {
            guard let key = scanner.string(), scanner.take(UInt8(ascii: ":")), let value = scanner.value() else {
                return nil
            }
            fields.append(ClusterStatsEntry(key, value))
        } while scanner.take(UInt8(ascii: ","))
        return scanner.take(UInt8(ascii: "}")) && scanner.atEnd ? fields : nil
    }

    /// A cursor over the object's bytes.
    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool {
            mutating get {
                skipSpace()
                return index == bytes.count
            }
        }

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        /// Takes `byte` (after white space) when it comes next.
        mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// A string or a bare value (number, `true`, `false`, `null`) as text.
        mutating func value() -> String? {
            skipSpace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "\"") { return string() }
            let start = index
            while index < bytes.count, !",}[{\" \t\r\n".utf8.contains(bytes[index]) { index += 1 }
            return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }

        /// A JSON string, unescaped.
        mutating func string() -> String? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            var out: [UInt8] = []
            while index < bytes.count {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return String(decoding: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { return nil }
                    let escaped = bytes[index]
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "u"):
                        guard index + 4 <= bytes.count,
                            let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16),
                            let scalar = Unicode.Scalar(code)
                        else { return nil }
                        index += 4
                        out.append(contentsOf: Array(String(Character(scalar)).utf8))
                    default: out.append(escaped)
                    }
                default: out.append(byte)
                }
            }
            return nil
        }
    }
}
