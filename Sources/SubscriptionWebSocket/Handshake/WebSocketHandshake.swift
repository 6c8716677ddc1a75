/// The server's side of the opening handshake (RFC 6455 section 4.2): judges an HTTP/1.1 upgrade request for one
/// listener and answers it, with the bytes to send back. A plain value: no sockets; the server reads the request
/// head, asks ``respond(to:)``, writes the response, and then speaks frames or closes.
///
/// The checks, in order, each with the status it answers (``WebSocketHandshakeRefusal``): the method is `GET`
/// (405); the target's path is ``path`` (404); HTTP/1.1 or later (400); exactly one `Host` (400); `Upgrade` holds
/// the token `websocket` and `Connection` the token `upgrade`, both ASCII case-insensitive (426, with
/// `Upgrade: websocket`); `Sec-WebSocket-Version` is one field `13` (426, with `Sec-WebSocket-Version: 13`);
/// `Sec-WebSocket-Key` is one field, the Base64 of 16 bytes (400); the `Origin` is allowed (403); the subprotocols
/// offered include ``subprotocol`` or ``mqttSubprotocol`` (400).
///
/// Origins: with an empty ``allowedOrigins`` any origin is let in. Otherwise a request's `Origin` must equal one of
/// them, ASCII case-insensitively (an origin is `scheme://host[:port]`, where only scheme and host have case), or it
/// is refused with 403. A request with no `Origin` is let in: browsers always send one, and the list exists to keep
/// other sites' pages out of a browser user's session; a program that is not a browser could send any `Origin` it
/// likes, so refusing the ones that send none would protect nothing and break command-line clients.
///
/// Subprotocol: a client that offers subprotocols must offer `subd` (the line protocol) or `mqtt` (MQTT 3.1.1 and
/// 5.0, as MQTT.js and every MQTT-over-WebSocket client asks for it), and the answer names the first of the two it
/// offered (`subd` when it offered both). A client that offers none is accepted too, with no `Sec-WebSocket-Protocol`
/// in the answer, and speaks the line protocol: simple clients (`websocat`, a quick browser test) need not know the
/// name.
public struct WebSocketHandshake: Equatable, Sendable {
    /// The line protocol (docs/PROTOCOL.md) over WebSocket messages.
    public static let subprotocol = "subd"
    /// MQTT over WebSocket binary messages (MQTT 3.1.1 section 6, MQTT 5.0 section 6).
    public static let mqttSubprotocol = "mqtt"

    /// The path the listener serves, e.g. `/` or `/subd` (compared exactly with the request target's path).
    public var path: String
    /// The `Origin` values let in (e.g. `https://example.com`); empty lets in any.
    public var allowedOrigins: [String] {
        didSet { lowercasedOrigins = Set(allowedOrigins.map { asciiLowercased($0) }) }
    }
    /// ``allowedOrigins`` with ASCII letters in lower case.
    private var lowercasedOrigins: Set<String>

    /// A handshake for a listener serving `path`, letting in `allowedOrigins` (empty: any).
    public init(path: String, allowedOrigins: [String] = []) {
        self.path = path
        self.allowedOrigins = allowedOrigins
        self.lowercasedOrigins = Set(allowedOrigins.map { asciiLowercased($0) })
    }

    /// Judges `request`: the `101 Switching Protocols` answer, or why not and the HTTP error response.
    public func respond(to request: WebSocketUpgradeRequest) -> WebSocketHandshakeOutcome {
        switch check(request) {
        case .failure(let refusal):
            return .refused(refusal)
        case .success(let (key, subprotocol)):
            var response =
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: \(WebSocketAcceptKey.accept(for: key))\r\n"
            if let subprotocol { response += "Sec-WebSocket-Protocol: \(subprotocol)\r\n" }
            response += "\r\n"
            return .accepted(response: Array(response.utf8), subprotocol: subprotocol)
        }
    }

    /// The checks of the type's summary, in order: the client's key and the subprotocol to answer with, or the
    /// first refusal.
    private func check(
        _ request: WebSocketUpgradeRequest
    ) -> Result<(key: String, subprotocol: String?), WebSocketHandshakeRefusal> {
        guard request.method == "GET" else { return .failure(.methodNotAllowed) }
        guard request.path == path else { return .failure(.notFound) }
        guard request.minorVersion >= 1 else { return .failure(.httpVersionTooOld) }
        guard request.values(of: "Host").count == 1 else { return .failure(.missingHost) }
        guard request.listElements(of: "Upgrade").contains(where: { asciiLowercased($0) == "websocket" }) else {
            return .failure(.notWebSocketUpgrade)
        }
        guard request.listElements(of: "Connection").contains(where: { asciiLowercased($0) == "upgrade" }) else {
            return .failure(.notWebSocketUpgrade)
        }
        guard request.values(of: "Sec-WebSocket-Version") == ["13"] else { return .failure(.unsupportedVersion) }
        let keys = request.values(of: "Sec-WebSocket-Key")
        guard keys.count == 1, WebSocketAcceptKey.isValid(keys[0]) else { return .failure(.invalidKey) }
        if !lowercasedOrigins.isEmpty {
            for origin in request.values(of: "Origin") where !lowercasedOrigins.contains(asciiLowercased(origin)) {
                return .failure(.originNotAllowed)
            }
        }
        let offered = request.listElements(of: "Sec-WebSocket-Protocol")
        if offered.isEmpty { return .success((keys[0], nil)) }
        if offered.contains(where: { $0 == Self.subprotocol }) { return .success((keys[0], Self.subprotocol)) }
        if offered.contains(where: { $0 == Self.mqttSubprotocol }) { return .success((keys[0], Self.mqttSubprotocol)) }
        return .failure(.noSupportedSubprotocol)
    }
}

/// What ``WebSocketHandshake/respond(to:)`` decided.
public enum WebSocketHandshakeOutcome: Equatable, Sendable {
    /// The upgrade is accepted: send `response` (`101 Switching Protocols`, the accept key, the subprotocol if
    /// the client offered any), then speak frames.
    case accepted(response: [UInt8], subprotocol: String?)
    /// The upgrade is refused: send ``WebSocketHandshakeRefusal/response`` and close.
    case refused(WebSocketHandshakeRefusal)

    /// The bytes to send back, either way.
    public var response: [UInt8] {
        switch self {
        case .accepted(let response, _): return response
        case .refused(let refusal): return refusal.response
        }
    }
}
