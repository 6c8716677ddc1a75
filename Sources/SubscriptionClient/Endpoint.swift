/// Where a subd server listens: a TCP host and port, or a Unix stream socket.
public enum Endpoint: Sendable, Equatable, CustomStringConvertible {
    /// A TCP endpoint; `host` is a name, an IPv4 address or an IPv6 address (without brackets).
    case tcp(host: String, port: Int)
    /// A Unix stream socket at `path`.
    case unix(path: String)

    /// The port subd listens on when none is given.
    public static let defaultPort = 7827

    /// Parses the forms `HOST:PORT`, `[IPV6]:PORT`, `HOST` or `[IPV6]` (port ``defaultPort``),
    /// `unix:PATH`, and a bare absolute path (`/run/subd.sock`) as a Unix socket.
    ///
    /// - Throws: ``ClientError/invalidArgument(_:)`` naming what is wrong with `text`.
    public init(parsing text: String) throws(ClientError) {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst("unix:".count))
            guard !path.isEmpty else { throw .invalidArgument("'\(text)' names no socket path after 'unix:'") }
            self = .unix(path: path)
            return
        }
        if text.hasPrefix("/") {
            self = .unix(path: text)
            return
        }
        var host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw .invalidArgument("'\(text)' opens '[' without closing it")
            }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else {
                    throw .invalidArgument("'\(text)' has text after ']' that is not :PORT")
                }
                portText = rest.dropFirst()
            }
        } else if let colon = text.firstIndex(of: ":") {
            guard text.lastIndex(of: ":") == colon else {
                throw .invalidArgument("'\(text)' looks like an IPv6 address: write it as [ADDRESS]:PORT")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        } else {
            host = Substring(text)
        }
        guard !host.isEmpty else { throw .invalidArgument("'\(text)' names no host (expected HOST:PORT)") }
        guard !host.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw .invalidArgument("'\(text)' has a space or control character in the host")
        }
        var port = Endpoint.defaultPort
        if let portText {
            guard let value = Int(portText), portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                (1...65535).contains(value)
            else {
                throw .invalidArgument("'\(text)' has no valid port (expected 1 to 65535 after ':')")
            }
            port = value
        }
        self = .tcp(host: String(host), port: port)
    }

    /// `HOST:PORT` (`[HOST]:PORT` for IPv6) or `unix:PATH`, the form ``init(parsing:)`` reads back.
    public var description: String {
        switch self {
        case .tcp(let host, let port): return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): return "unix:\(path)"
        }
    }
}
