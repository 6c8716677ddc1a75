import Glibc

/// Socket addresses for the tests' own clients and for ports named before the process that binds them starts
/// (systemd's tools bind for subd; a READY=1 check connects before any log line is read).
enum TestAddress {
    /// `127.0.0.1:port`.
    static func loopback(_ port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// The Unix socket at `path`; throws when the path does not fit in `sun_path`.
    static func unix(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw HarnessError.process("unix socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return address
    }

    /// A TCP port on 127.0.0.1 that was just bound and closed, so nothing listens on it (until someone binds it).
    static func freeLoopbackPort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError.system("socket", errno) }
        defer { close(fd) }
        var bound = loopback(0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { throw HarnessError.system("bind 127.0.0.1:0", errno) }
        return UInt16(bigEndian: bound.sin_port)
    }
}
