import SubscriptionWire

/// A protocol-level error: becomes `-ERR <CODE> <message>` (see ``ReplyEncoder/error(_:into:)``).
public struct ProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The code sent after `-ERR`.
    public var code: ErrorCode
    /// The human-readable text after the code; a person should be able to act on it.
    public var message: String
    /// True when the server closes the connection after sending this error.
    public var closesConnection: Bool

    /// Makes an error with `code` and `message`; by default the connection stays open.
    public init(_ code: ErrorCode, _ message: String, closesConnection: Bool = false) {
        self.code = code
        self.message = message
        self.closesConnection = closesConnection
    }

    /// `CODE message`, as in the reply line without `-ERR `.
    public var description: String { "\(code.rawValue) \(message)" }
}
