/// Where a subd server listens, as the text of `--server`, `--listen` and the `listen` key gives it: a TCP host and
/// port (`HOST:PORT`, `[IPV6]:PORT`), or a Unix stream socket (`unix:PATH`).
///
/// One parser serves both ends; what differs between a listener and a client is said by ``Use``.
public enum ServerAddress: Sendable, Hashable, CustomStringConvertible {
    /// A TCP address; `host` is a name, an IPv4 address or an IPv6 address (without brackets).
    case tcp(host: String, port: Int)
    /// A Unix stream socket at `path`.
    case unix(path: String)

    /// The port subd listens on when none is given (docs/PROTOCOL.md, Transport).
    public static let defaultPort = 7827

    /// Who reads the address, which decides the port rules.
    public enum Use: Sendable {
        /// A server's listener (`listen`, `--listen`): the port is required, and 0 asks the kernel for a free one.
        case listening
        /// A client (`--server`): the port may be left out (``ServerAddress/defaultPort``) and is 1 to 65535;
        /// a bare absolute path (`/run/subd/subd.sock`) is a Unix socket.
        case connecting
    }

    /// Why a text is not an address. The description is a sentence fragment that follows the text, e.g.
    /// `'host:x' has no valid port (expected 1 to 65535 after ':')`.
    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// `unix:` with nothing after it.
        case noPath
        /// A `[` without its `]`.
        case unclosedBracket
        /// Something other than `:PORT` after `]`.
        case textAfterBracket
        /// More than one `:` outside brackets: an IPv6 address must be written `[ADDRESS]:PORT`.
        case unbracketedIPv6
        /// No host before the `:` (or nothing at all).
        case noHost
        /// A space or control character in the host.
        case forbiddenByteInHost(UInt8)
        /// A listener's address without `:PORT`.
        case noPort
        /// The port is not a decimal number in `allowed`.
        case badPort(allowed: ClosedRange<Int>)

        public var description: String {
            switch self {
            case .noPath: return "names no socket path after 'unix:'"
            case .unclosedBracket: return "opens '[' without closing it"
            case .textAfterBracket: return "has text after ']' that is not :PORT"
            case .unbracketedIPv6: return "looks like an IPv6 address: write it as [ADDRESS]:PORT"
            case .noHost: return "names no host (expected HOST:PORT)"
            case .forbiddenByteInHost: return "has a space or control character in the host"
            case .noPort: return "has no port (expected HOST:PORT)"
            case .badPort(let allowed):
                return "has no valid port (expected \(allowed.lowerBound) to \(allowed.upperBound) after ':')"
            }
        }
    }

    /// Parses `HOST:PORT`, `[IPV6]:PORT` or `unix:PATH`; for a client also `HOST`, `[IPV6]` and a bare absolute
    /// path (see ``Use``).
    public init(parsing text: String, for use: Use) throws(Problem) {
        if text.hasPrefix("unix:") {
            let path = String(text.dropFirst("unix:".count))
            guard !path.isEmpty else { throw .noPath }
            self = .unix(path: path)
            return
        }
        if use == .connecting && text.hasPrefix("/") {
            self = .unix(path: text)
            return
        }
        var host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .unclosedBracket }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.first == ":" else { throw .textAfterBracket }
                portText = rest.dropFirst()
            }
        } else if let colon = text.firstIndex(of: ":") {
            guard text.lastIndex(of: ":") == colon else { throw .unbracketedIPv6 }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        } else {
            host = Substring(text)
        }
        guard !host.isEmpty else { throw .noHost }
        if let byte = host.utf8.first(where: WordByte.isForbidden) { throw .forbiddenByteInHost(byte) }
        let allowed = use == .listening ? 0...65535 : 1...65535
        guard let portText else {
            guard use == .connecting else { throw .noPort }
            self = .tcp(host: String(host), port: Self.defaultPort)
            return
        }
        guard (1...5).contains(portText.utf8.count), portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let port = Int(portText), allowed.contains(port)
        else {
            throw .badPort(allowed: allowed)
        }
        self = .tcp(host: String(host), port: port)
    }

    /// `HOST:PORT` (`[HOST]:PORT` for IPv6) or `unix:PATH`, the form ``init(parsing:for:)`` reads back.
    public var description: String {
        switch self {
        case .tcp(let host, let port): return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): return "unix:\(path)"
        }
    }
}
