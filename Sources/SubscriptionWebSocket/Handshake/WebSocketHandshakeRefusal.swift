/// Why an upgrade request was refused, each with its HTTP status and the response that says so.
public enum WebSocketHandshakeRefusal: Error, Equatable, Sendable, CustomStringConvertible {
    /// The method is not `GET`. 405, with `Allow: GET`.
    case methodNotAllowed
    /// The path is not the one the listener serves. 404.
    case notFound
    /// HTTP/1.0: it has no upgrade. 400.
    case httpVersionTooOld
    /// No `Host` field, or more than one. 400.
    case missingHost
    /// No `Upgrade: websocket`, or no `upgrade` token in `Connection`: not a WebSocket request (a browser opening
    /// the URL, say). 426, with `Upgrade: websocket`.
    case notWebSocketUpgrade
    /// `Sec-WebSocket-Version` is missing or not `13`. 426, with `Sec-WebSocket-Version: 13`.
    case unsupportedVersion
    /// `Sec-WebSocket-Key` is missing, given twice, or not the Base64 of 16 bytes. 400.
    case invalidKey
    /// The `Origin` is not in the listener's allow-list. 403.
    case originNotAllowed
    /// The client offered subprotocols, none of them `subd`. 400.
    case noSupportedSubprotocol

    /// The HTTP status code.
    public var status: Int {
        switch self {
        case .methodNotAllowed: return 405
        case .notFound: return 404
        case .httpVersionTooOld, .missingHost, .invalidKey, .noSupportedSubprotocol: return 400
        case .notWebSocketUpgrade, .unsupportedVersion: return 426
        case .originNotAllowed: return 403
        }
    }

    /// The one-line body of the response, for a person.
    public var description: String {
        switch self {
        case .methodNotAllowed: return "a WebSocket upgrade must use GET"
        case .notFound: return "no WebSocket endpoint at this path"
        case .httpVersionTooOld: return "a WebSocket upgrade needs HTTP/1.1"
        case .missingHost: return "a request needs exactly one Host field"
        case .notWebSocketUpgrade: return "this is a WebSocket endpoint: send Upgrade: websocket, Connection: Upgrade"
        case .unsupportedVersion: return "only WebSocket version 13 is supported"
        case .invalidKey: return "Sec-WebSocket-Key must be the Base64 of 16 bytes, given once"
        case .originNotAllowed: return "this Origin is not allowed"
        case .noSupportedSubprotocol: return "the subprotocols offered here are subd and mqtt"
        }
    }

    /// The response: status line, the fields the status calls for, `Content-Type`, `Content-Length`,
    /// `Connection: close`, and ``description`` and a LF as the body.
    public var response: [UInt8] {
        let body = description + "\n"
        var head = "HTTP/1.1 \(status) \(statusText)\r\n"
        switch self {
        case .methodNotAllowed: head += "Allow: GET\r\n"
        case .notWebSocketUpgrade: head += "Upgrade: websocket\r\n"
        case .unsupportedVersion: head += "Sec-WebSocket-Version: 13\r\n"
        default: break
        }
        head += "Content-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
        head += "Connection: close\r\n\r\n"
        return Array((head + body).utf8)
    }

    /// The status line's reason phrase.
    private var statusText: String {
        switch status {
        case 400: return "Bad Request"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        default: return "Upgrade Required"
        }
    }
}
