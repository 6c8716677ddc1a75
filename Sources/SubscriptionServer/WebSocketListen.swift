import SubscriptionWire

/// A `listen` entry served over WebSocket: `ws://HOST:PORT/PATH`, or `wss://HOST:PORT/PATH` with TLS (the
/// `tls_cert` and `tls_key` of `tls://` listeners). Its connections upgrade with HTTP/1.1 at `PATH` and then speak
/// the line protocol inside WebSocket messages (docs/PROTOCOL.md, "Over WebSocket").
public struct WebSocketListen: Equatable, Sendable, CustomStringConvertible {
    /// The TCP address.
    public var address: ListenAddress
    /// The path the upgrade request must name (`/` when the entry has none).
    public var path: String
    /// True for `wss://`.
    public var isTLS: Bool

    /// The scheme of a plain WebSocket entry.
    public static let scheme = "ws://"
    /// The scheme of a WebSocket entry over TLS.
    public static let tlsScheme = "wss://"

    /// A WebSocket listener on `address` serving `path`.
    public init(address: ListenAddress, path: String = "/", isTLS: Bool = false) {
        self.address = address
        self.path = path
        self.isTLS = isTLS
    }

    /// Parses `ws://HOST:PORT[/PATH]` or `wss://HOST:PORT[/PATH]`; nil for text with neither scheme. The address
    /// follows the rules of every `listen` entry and must be TCP; the path starts at the first `/` after it.
    public init?(parsing text: String, key: String = "listen") throws(ConfigurationError) {
        let isTLS = text.hasPrefix(Self.tlsScheme)
        guard isTLS || text.hasPrefix(Self.scheme) else { return nil }
        let rest = text.dropFirst(isTLS ? Self.tlsScheme.count : Self.scheme.count)
        // An IPv6 literal's colons are inside brackets: the path starts at the first '/' after them.
        let hostEnd = rest.firstIndex(of: "]") ?? rest.startIndex
        let slash = rest[hostEnd...].firstIndex(of: "/") ?? rest.endIndex
        let address = try ListenAddress(parsing: String(rest[..<slash]), key: key)
        guard case .tcp = address else {
            throw ConfigurationError(key: key, problem: "'\(text)': a WebSocket listener takes a TCP address HOST:PORT")
        }
        let path = rest[slash...].isEmpty ? "/" : String(rest[slash...])
        guard path.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") })
        else {
            throw ConfigurationError(key: key, problem: "'\(text)': the path must be visible ASCII without '?' or '#'")
        }
        self.init(address: address, path: path, isTLS: isTLS)
    }

    /// The entry as written in `listen`, e.g. `ws://127.0.0.1:7828/subd`.
    public var entry: String { (isTLS ? Self.tlsScheme : Self.scheme) + address.endpoint + path }

    public var description: String { entry }
}
