import SubscriptionWire

/// The parts of an HTTP/1.x request head that a WebSocket upgrade is judged on (RFC 6455 section 4.2.1). The server
/// parses the head (its HTTP request-head parser) and fills one in; this target reads no bytes of HTTP itself.
public struct WebSocketUpgradeRequest: Equatable, Sendable {
    /// One header field (names compared in any ASCII case).
    public typealias Field = HeaderField

    /// The method, e.g. `GET` (case-sensitive, as RFC 9110 says).
    public var method: String
    /// The request target as sent, e.g. `/ws` or `/ws?x=1`.
    public var target: String
    /// The `x` of `HTTP/1.x` (an upgrade needs 1.1 or later).
    public var minorVersion: Int
    /// The header fields, in order; a name may appear more than once.
    public var fields: [Field]

    /// A request with these parts.
    public init(method: String, target: String, minorVersion: Int, fields: [Field]) {
        self.method = method
        self.target = target
        self.minorVersion = minorVersion
        self.fields = fields
    }

    /// The target's path: up to a `?` or `#`.
    public var path: Substring { target.prefix(while: { $0 != "?" && $0 != "#" }) }

    /// The values of every field called `name` (ASCII case-insensitive), in order.
    public func values(of name: String) -> [String] {
        fields.filter { asciiLowercased($0.name) == asciiLowercased(name) }.map(\.value)
    }

    /// The comma-separated elements of every field called `name`, blanks trimmed, empty ones dropped (RFC 9110
    /// section 5.6.1's list rule).
    public func listElements(of name: String) -> [Substring] {
        values(of: name).flatMap { value in
            value.split(separator: ",").map(trimmingBlanks).filter { !$0.isEmpty }
        }
    }
}

/// `text` with ASCII A-Z made a-z (header names, tokens, origins; nothing else is folded).
func asciiLowercased<Text: StringProtocol>(_ text: Text) -> String {
    String(
        decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 },
        as: UTF8.self)
}

/// `text` without spaces and tabs at either end.
func trimmingBlanks(_ text: Substring) -> Substring {
    let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
    guard let first = text.firstIndex(where: { !isBlank($0) }) else { return text[text.endIndex...] }
    let last = text.lastIndex(where: { !isBlank($0) })!
    return text[first...last]
}
