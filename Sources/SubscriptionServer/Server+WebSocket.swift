import Logging
import SubscriptionWebSocket

/// What a listener's connections carry the line protocol over.
enum ListenerTransport: Equatable {
    /// The bytes of the socket (plain TCP or a Unix socket).
    case lines
    /// A TLS session (`tls://`).
    case tls
    /// WebSocket messages after an HTTP/1.1 upgrade at `path` (`ws://`), over TLS when `isTLS` (`wss://`).
    case webSocket(path: String, isTLS: Bool)
    /// MQTT instead of the line protocol (`mqtt://`), over TLS when `isTLS` (`mqtts://`).
    case mqtt(isTLS: Bool)

    /// True for an MQTT listener's connections.
    var isMQTT: Bool {
        if case .mqtt = self { return true }
        return false
    }

    /// True when connections start with a TLS handshake.
    var usesTLS: Bool {
        switch self {
        case .lines: return false
        case .tls: return true
        case .webSocket(_, let isTLS): return isTLS
        case .mqtt(let isTLS): return isTLS
        }
    }

    /// How the log names a listener of this kind on `address`: `tcp 127.0.0.1:7827`, `tls 127.0.0.1:7828`,
    /// `ws 127.0.0.1:7829/subd`.
    func describe(_ address: ListenAddress) -> String {
        switch self {
        case .lines: return "\(address)"
        case .tls: return "tls \(address.endpoint)"
        case .webSocket(let path, let isTLS): return "\(isTLS ? "wss" : "ws") \(address.endpoint)\(path)"
        case .mqtt(let isTLS): return "\(isTLS ? "mqtts" : "mqtt") \(address.endpoint)"
        }
    }
}

extension Server {
    /// The WebSocket layer of a new connection on a listener serving `transport`; nil for one that is not WebSocket.
    /// The origins and frame limits are those in force now (a reload applies them to later connections; a running
    /// one gets new frame limits with its other limits).
    func makeWebSocketTransport(for transport: ListenerTransport) -> WebSocketTransport? {
        guard case .webSocket(let path, _) = transport else { return nil }
        return WebSocketTransport(
            handshake: WebSocketHandshake(path: path, allowedOrigins: configuration.webSocketOrigins),
            limits: WebSocketTransport.limits(for: configuration.protocolLimits),
            servesConsole: configuration.webConsole)
    }

    /// A client broke its transport's rules (a WebSocket upgrade refused, frames against RFC 6455): logged at info
    /// (a scanner or a broken client is no warning) and counted with the protocol errors (STATS `protocol_errors`);
    /// the session closes.
    func sessionBrokeTransport(_ session: Session, problem: String) {
        loop.traffic.protocolErrors += 1
        logger.info(
            "\(problem)",
            metadata: ["session": "\(session.id)", "address": "\(session.peerAddress)"])
    }
}
