import SubscriptionSystem
import SubscriptionWire

#if canImport(Glibc)
    import Glibc
#endif

/// An address the server listens on.
public enum ListenAddress: Equatable, Sendable, CustomStringConvertible {
    /// A TCP host (name, IPv4 or IPv6 literal) and port; port 0 asks the kernel for a free one.
    case tcp(host: String, port: Int)
    /// A Unix stream socket at this path.
    case unix(path: String)

    /// Parses `HOST:PORT`, `[IPv6]:PORT` or `unix:PATH` with the wire's address rules (``ServerAddress``); an error
    /// names `key`, the configuration key the text came from.
    public init(parsing text: String, key: String = "listen") throws(ConfigurationError) {
        do throws(ServerAddress.Problem) {
            switch try ServerAddress(parsing: text, for: .listening) {
            case .tcp(let host, let port): self = .tcp(host: host, port: port)
            case .unix(let path): self = .unix(path: path)
            }
        } catch {
            throw ConfigurationError(key: key, problem: "'\(text)' \(error)")
        }
    }

    public var description: String {
        switch self {
        case .tcp: return "tcp \(endpoint)"
        case .unix(let path): return "unix \(path)"
        }
    }

    /// `HOST:PORT` (`[IPv6]:PORT`), or `unix:PATH` (`unix` for an unnamed client socket).
    public var endpoint: String {
        switch self {
        case .tcp(let host, let port): return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): return path.isEmpty ? "unix" : "unix:\(path)"
        }
    }
}

/// A bound, listening, non-blocking socket.
struct ListeningSocket {
    /// The descriptor.
    let fd: Int32
    /// What it is bound to; for TCP the real port (useful with port 0).
    let address: ListenAddress
    /// True when the server made the socket file and should unlink it at exit.
    let ownsPath: Bool

    /// Binds and listens on `address`. A Unix socket path left over from an earlier run is replaced.
    static func bind(_ address: ListenAddress, unixMode: UInt32) throws(SystemCallError) -> ListeningSocket {
        switch address {
        case .tcp(let host, let port): return try bindTCP(host: host, port: port)
        case .unix(let path): return try bindUnix(path: path, mode: unixMode)
        }
    }

    /// Adopts a listening socket that systemd passed in (socket activation).
    static func adopt(fd: Int32) throws(SystemCallError) -> ListeningSocket {
        try Syscall.setNonBlocking(fd)
        return ListeningSocket(fd: fd, address: localAddress(of: fd), ownsPath: false)
    }

    private static func bindTCP(host: String, port: Int) throws(SystemCallError) -> ListeningSocket {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let what = "bind \(host):\(port)"
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw SystemCallError("\(what): cannot resolve host (\(String(cString: gai_strerror(status))))", errno: 0)
        }
        defer { freeaddrinfo(list) }
        let fd = socket(
            first.pointee.ai_family,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemCallError("socket for \(what)", errno: errno) }
        do throws(SystemCallError) {
            try Syscall.setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR")
            guard Glibc.bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
                throw SystemCallError(what, errno: errno)
            }
            guard listen(fd, 1024) == 0 else { throw SystemCallError("listen on \(host):\(port)", errno: errno) }
            return ListeningSocket(fd: fd, address: localAddress(of: fd), ownsPath: false)
        } catch {
            Syscall.close(fd)
            throw error
        }
    }

    private static func bindUnix(path: String, mode: UInt32) throws(SystemCallError) -> ListeningSocket {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            throw SystemCallError("bind unix \(path): path longer than \(capacity - 1) bytes", errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
        }
        // Replace a socket left by an earlier run, but never another kind of file.
        var info = stat()
        if lstat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFSOCK else {
                throw SystemCallError("bind unix \(path): the path exists and is not a socket", errno: EEXIST)
            }
            unlink(path)
        }
        let fd = socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemCallError("socket for unix \(path)", errno: errno) }
        do throws(SystemCallError) {
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard bound == 0 else { throw SystemCallError("bind unix \(path)", errno: errno) }
            guard chmod(path, mode_t(mode)) == 0 else { throw SystemCallError("chmod \(path)", errno: errno) }
            guard listen(fd, 1024) == 0 else { throw SystemCallError("listen on unix \(path)", errno: errno) }
            return ListeningSocket(fd: fd, address: .unix(path: path), ownsPath: true)
        } catch {
            Syscall.close(fd)
            throw error
        }
    }

    /// inet_ntop(3) of an IPv4 or IPv6 address.
    private static func numericHost(_ family: Int32, _ address: UnsafeRawPointer) -> String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        inet_ntop(family, address, &text, socklen_t(text.count))
        return String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The address a socket is bound to, read back with getsockname(2).
    static func localAddress(of fd: Int32) -> ListenAddress {
        address(of: fd, peer: false)
    }

    /// The address of a connected socket's peer (getpeername(2)): `tcp 127.0.0.1:51000`, or `unix` with the path
    /// the client bound, usually none.
    static func peerAddress(of fd: Int32) -> ListenAddress {
        address(of: fd, peer: true)
    }

    private static func address(of fd: Int32, peer: Bool) -> ListenAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                (peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length)) == 0
            }
        }
        guard ok else { return .tcp(host: "?", port: 0) }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                    var addr = sin.pointee.sin_addr
                    return .tcp(host: numericHost(AF_INET, &addr), port: Int(UInt16(bigEndian: sin.pointee.sin_port)))
                }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                    var addr = sin6.pointee.sin6_addr
                    return .tcp(
                        host: numericHost(AF_INET6, &addr), port: Int(UInt16(bigEndian: sin6.pointee.sin6_port)))
                }
            }
        case AF_UNIX:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_un.self, capacity: 1) { sun in
                    var path = sun.pointee.sun_path
                    let text = withUnsafeBytes(of: &path) { raw in
                        String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
                    }
                    return .unix(path: text)
                }
            }
        default:
            return .tcp(host: "?", port: 0)
        }
    }
}
