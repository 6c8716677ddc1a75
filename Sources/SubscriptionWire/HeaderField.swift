/// One `Name: value` header field, as HTTP (a WebSocket upgrade) and NATS message headers write them: the name as
/// sent (each user says how it compares names), the value without the blanks around it.
public struct HeaderField: Equatable, Sendable {
    /// The name, as written.
    public var name: String
    /// The value, without the blanks around it.
    public var value: String

    /// A field `name: value`.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}
