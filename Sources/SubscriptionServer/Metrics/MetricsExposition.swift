/// Writes the Prometheus text exposition format, version 0.0.4: for each family a `# HELP` and a `# TYPE` line,
/// then its samples, `name{label="value",...} value`, one a line, LF-terminated.
///
/// A plain value that only appends bytes. Help text escapes `\` and line feeds, label values escape `\`, `"` and
/// line feeds, as the format requires; metric and label names are the caller's constants and are checked in debug
/// builds only. Written here rather than with swift-prometheus: see `MetricsSnapshot`.
struct MetricsExposition {
    /// The two kinds of metric subd exposes.
    enum Kind: String {
        /// Only goes up (a reset to 0 is a restart).
        case counter
        /// Goes up and down.
        case gauge
    }

    /// The content type of what ``bytes`` holds.
    static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    /// The text so far, UTF-8.
    private(set) var bytes: [UInt8] = []
    /// The family whose samples are being written.
    private var family = ""
    /// The label every sample carries first (a cluster node's `node`), nil for none.
    private let commonLabel: (name: String, value: String)?

    /// An empty exposition whose samples all carry `commonLabel` first (nil: none).
    init(commonLabel: (name: String, value: String)? = nil) {
        self.commonLabel = commonLabel
    }

    /// Starts a family: its `# HELP` and `# TYPE` lines. Its samples follow, each named `name` (a counter's name
    /// ends in `_total`).
    mutating func family(_ name: String, _ kind: Kind, help: String) {
        assert(Self.isValidMetricName(name), "not a Prometheus metric name: \(name)")
        assert(kind != .counter || name.hasSuffix("_total"), "a counter's name ends in _total: \(name)")
        family = name
        append("# HELP ")
        append(name)
        bytes.append(UInt8(ascii: " "))
        for byte in help.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): append("\\\\")
            case UInt8(ascii: "\n"): append("\\n")
            default: bytes.append(byte)
            }
        }
        append("\n# TYPE ")
        append(name)
        bytes.append(UInt8(ascii: " "))
        append(kind.rawValue)
        bytes.append(UInt8(ascii: "\n"))
    }

    /// A sample of the current family: `labels` in the order given, then the value.
    mutating func sample(labels: KeyValuePairs<String, String> = [:], _ value: UInt64) {
        startSample(labels)
        append(String(value))
        bytes.append(UInt8(ascii: "\n"))
    }

    /// A sample of the current family with a whole-number value.
    mutating func sample(labels: KeyValuePairs<String, String> = [:], _ value: Int) {
        startSample(labels)
        append(String(value))
        bytes.append(UInt8(ascii: "\n"))
    }

    /// A sample of the current family with a fractional value (`NaN`, `+Inf` and `-Inf` as the format spells them).
    mutating func sample(labels: KeyValuePairs<String, String> = [:], _ value: Double) {
        startSample(labels)
        if value.isNaN {
            append("NaN")
        } else if value.isInfinite {
            append(value > 0 ? "+Inf" : "-Inf")
        } else {
            append(String(value))
        }
        bytes.append(UInt8(ascii: "\n"))
    }

    /// A family of one unlabelled sample.
    mutating func single(_ name: String, _ kind: Kind, help: String, _ value: UInt64) {
        family(name, kind, help: help)
        sample(value)
    }

    /// True for `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    static func isValidMetricName(_ name: String) -> Bool {
        isName(name, allowingColon: true)
    }

    /// True for `[a-zA-Z_][a-zA-Z0-9_]*`.
    static func isValidLabelName(_ name: String) -> Bool {
        isName(name, allowingColon: false)
    }

    // MARK: Private

    private mutating func startSample(_ labels: KeyValuePairs<String, String>) {
        assert(!family.isEmpty, "a sample before any family")
        append(family)
        guard !labels.isEmpty || commonLabel != nil else {
            bytes.append(UInt8(ascii: " "))
            return
        }
        bytes.append(UInt8(ascii: "{"))
        var all = Array(labels)
        if let commonLabel { all.insert((commonLabel.name, commonLabel.value), at: 0) }
        for (index, (name, value)) in all.enumerated() {
            assert(Self.isValidLabelName(name), "not a Prometheus label name: \(name)")
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            append(name)
            append("=\"")
            for byte in value.utf8 {
                switch byte {
                case UInt8(ascii: "\\"): append("\\\\")
                case UInt8(ascii: "\""): append("\\\"")
                case UInt8(ascii: "\n"): append("\\n")
                default: bytes.append(byte)
                }
            }
            bytes.append(UInt8(ascii: "\""))
        }
        append("} ")
    }

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    private static func isName(_ name: String, allowingColon: Bool) -> Bool {
        guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            return false
        }
        return name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                return true
            case UInt8(ascii: ":"):
                return allowingColon
            default:
                return false
            }
        }
    }
}
