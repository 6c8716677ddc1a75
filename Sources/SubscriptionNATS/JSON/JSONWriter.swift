import SubscriptionWire

/// Writes one JSON object, member by member, as the client sends them (`CONNECT`, JetStream API requests). Strings
/// are escaped by SubscriptionWire's ``JSONText`` (one escaping rule for the project).
public struct JSONWriter {
    /// The text so far.
    private var text = "{"
    private var isFirst = true

    /// An empty object.
    public init() {}

    /// Adds `"key": "value"`.
    public mutating func add(_ key: String, _ value: String) { member(key, JSONText.quoted(value)) }

    /// Adds `"key": value` for an integer.
    public mutating func add(_ key: String, _ value: Int) { member(key, String(value)) }

    /// Adds `"key": value` for an unsigned integer.
    public mutating func add(_ key: String, _ value: UInt64) { member(key, String(value)) }

    /// Adds `"key": true|false`.
    public mutating func add(_ key: String, _ value: Bool) { member(key, value ? "true" : "false") }

    /// Adds `"key": ["a", "b"]`.
    public mutating func add(_ key: String, strings: [String]) {
        member(key, "[" + strings.map(JSONText.quoted).joined(separator: ",") + "]")
    }

    /// Adds `"key": {...}`, the object `nested` wrote.
    public mutating func add(_ key: String, object nested: JSONWriter) { member(key, nested.text + "}") }

    /// Adds `"key"` with `value` when it is not nil.
    public mutating func addIfPresent(_ key: String, _ value: String?) {
        if let value { add(key, value) }
    }

    /// The finished object.
    public var result: String { text + "}" }

    private mutating func member(_ key: String, _ json: String) {
        if !isFirst { text += "," }
        isFirst = false
        text += JSONText.quoted(key) + ":" + json
    }
}
