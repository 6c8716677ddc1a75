/// A parsed JSON value: what the client reads from `INFO` and from JetStream's API replies.
///
/// Numbers keep their text, so a 64-bit sequence number is read back exactly (no detour through `Double`).
public enum JSONValue: Equatable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, as its text (`12`, `-1`, `1.5e3`).
    case number(String)
    /// A string, unescaped.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; a key given twice keeps its last value.
    case object([String: JSONValue])

    /// The member `key` of an object; nil for a missing key or a value that is not an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string, or nil for another kind of value.
    public var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The boolean, or nil for another kind of value.
    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// A number that is a whole number in `Int`'s range, or nil.
    public var int: Int? {
        if case .number(let text) = self { return Int(text) }
        return nil
    }

    /// A number that is a whole number in `UInt64`'s range, or nil.
    public var uint64: UInt64? {
        if case .number(let text) = self { return UInt64(text) }
        return nil
    }

    /// The elements of an array, or nil for another kind of value.
    public var array: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }
}
