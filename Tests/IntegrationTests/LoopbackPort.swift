import Glibc

/// TCP ports on 127.0.0.1 for tests that must name a port before the process that binds it starts (systemd's tools
/// bind for subd; a READY=1 check connects before any log line is read).
enum LoopbackPort {
    /// A TCP port that was free a moment ago on 127.0.0.1.
    static func free() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HarnessError.system("socket", errno) }
        defer { Glibc.close(fd) }
        var bound = address(0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { throw HarnessError.system("bind 127.0.0.1:0", errno) }
        return UInt16(bigEndian: bound.sin_port)
    }

    /// `127.0.0.1:port` as a sockaddr_in.
    static func address(_ port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
