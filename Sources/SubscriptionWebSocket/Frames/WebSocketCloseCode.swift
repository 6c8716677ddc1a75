/// A close frame's status code (RFC 6455 section 7.4), the first two bytes of its payload, big-endian.
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code as sent.
    public let rawValue: UInt16

    /// The code `rawValue`, whether or not a close frame may carry it (see ``isAllowedInCloseFrame``).
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the purpose of the connection is fulfilled.
    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// 1001: the server is going down (or a browser leaves the page).
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// 1002: the peer broke the framing rules (``WebSocketViolation`` says which).
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// 1003: a kind of data the endpoint cannot accept.
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// 1005: no code was in the close frame. Never sent; only a name for that case.
    public static let noStatusReceived = WebSocketCloseCode(rawValue: 1005)
    /// 1006: the connection ended without a close frame. Never sent; only a name for that case.
    public static let abnormalClosure = WebSocketCloseCode(rawValue: 1006)
    /// 1007: a text message (or a close reason) that is not UTF-8.
    public static let invalidPayload = WebSocketCloseCode(rawValue: 1007)
    /// 1008: a message that breaks the endpoint's policy (a generic refusal).
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// 1009: a frame or message over the endpoint's size limit.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// 1010: the client needed an extension the server did not agree to (sent by clients only).
    public static let mandatoryExtension = WebSocketCloseCode(rawValue: 1010)
    /// 1011: the server met a condition it cannot handle.
    public static let internalError = WebSocketCloseCode(rawValue: 1011)

    /// True when a close frame may carry this code: 1000-1003, 1007-1014 (RFC 6455 and IANA's registry: 1012 service
    /// restart, 1013 try again later, 1014 bad gateway) and 3000-4999 (libraries, frameworks, applications). Never
    /// 1004, 1005, 1006 or 1015 (reserved, or names for "no code"), nor anything below 1000 or in 1016-2999
    /// (reserved for future revisions), nor 5000 and above. The decoder refuses any other with 1002, as the
    /// Autobahn test suite expects.
    public var isAllowedInCloseFrame: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }

    public var description: String { String(rawValue) }
}
