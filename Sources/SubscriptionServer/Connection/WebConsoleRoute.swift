import SubscriptionWebConsole
import SubscriptionWebSocket

/// What a WebSocket listener answers a plain HTTP request with when `web_console` is on (issue 24): `GET` (or `HEAD`)
/// of a file of ``WebConsole`` (`/`, `/console.js`, `/console.css`, `/subd.js`) gets the file, `200`, and the
/// connection closes. A request that asks for an upgrade, another path or another method is the handshake's to
/// answer (`101`, or `404`, `405`, `426` as before), so the listener's WebSocket path may be `/` itself.
///
/// The page may run only its own scripts and styles and connect only to its own origin's WebSockets
/// (`Content-Security-Policy`), may not be framed, and is not cached past a restart of subd (`no-cache`).
enum WebConsoleRoute {
    /// The policy every file is served with.
    static let contentSecurityPolicy =
        "default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; style-src 'self'; "
        + "script-src 'self'; frame-ancestors 'none'"

    /// The response to `request` on a listener whose WebSocket path is `webSocketPath`; nil when the handshake
    /// answers it.
    static func response(to request: WebSocketUpgradeRequest, webSocketPath: String) -> HTTPResponse? {
        guard request.method == "GET" || request.method == "HEAD",
            !request.listElements(of: "Upgrade").contains(where: { asciiLowercase($0) == "websocket" }),
            let file = WebConsole.file(at: request.path)
        else { return nil }
        let body = file.path == "/" ? WebConsole.page(webSocketPath: webSocketPath) : file.bytes
        return HTTPResponse(
            status: 200, reason: "OK",
            fields: [
                .init(name: "Content-Type", value: file.contentType),
                .init(name: "Cache-Control", value: "no-cache"),
                .init(name: "X-Content-Type-Options", value: "nosniff"),
                .init(name: "Referrer-Policy", value: "no-referrer"),
                .init(name: "Content-Security-Policy", value: contentSecurityPolicy),
            ],
            body: body, sendsBody: request.method == "GET")
    }

    /// ASCII letters in lower case (header tokens compare so).
    private static func asciiLowercase(_ text: Substring) -> String {
        String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
    }
}
