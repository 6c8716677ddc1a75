import Glibc
import SubscriptionSystem

/// Opens a connected, non-blocking, close-on-exec stream socket to an ``Endpoint``. Blocking (name lookup and
/// a bounded wait for the TCP handshake): call it off the cooperative thread pool. System calls go through
/// SubscriptionSystem's ``Syscall``.
enum SocketConnector {
    /// Connects to `endpoint`, trying every address a TCP host resolves to, each for at most `timeout`.
    ///
    /// - Throws: ``ClientError/connectFailed(endpoint:reason:)`` with the last failure.
    static func connect(to endpoint: Endpoint, timeout: Duration) throws(ClientError) -> Int32 {
        switch endpoint {
        case .tcp(let host, let port):
            return try connectTCP(host: host, port: port, timeout: timeout, endpoint: endpoint.description)
        case .unix(let path):
            return try connectUnix(path: path, timeout: timeout, endpoint: endpoint.description)
        }
    }

    private static func connectTCP(host: String, port: Int, timeout: Duration, endpoint: String)
        throws(ClientError) -> Int32
    {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = status == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(status))
            throw .connectFailed(endpoint: endpoint, reason: lowercasedFirst(reason))
        }
        defer { freeaddrinfo(list) }
        var lastError = SystemCallError("connect", errno: ECONNREFUSED)
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            do throws(SystemCallError) {
                let fd = try Syscall.streamSocket(family: info.pointee.ai_family)
                do throws(SystemCallError) {
                    try Syscall.setNonBlocking(fd)
                    try connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen, timeout: timeout)
                } catch {
                    Syscall.close(fd)
                    throw error
                }
                _ = try? Syscall.setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1, "TCP_NODELAY")
                return fd
            } catch {
                lastError = error
            }
        }
        throw .connectFailed(endpoint: endpoint, reason: lowercasedFirst(lastError.reason))
    }

    private static func connectUnix(path: String, timeout: Duration, endpoint: String) throws(ClientError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else {
            throw .connectFailed(endpoint: endpoint, reason: "the socket path is longer than \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            raw[pathBytes.count] = 0
        }
        do throws(SystemCallError) {
            let fd = try Syscall.streamSocket(family: AF_UNIX)
            do throws(SystemCallError) {
                // Blocking: a full backlog makes a Unix connect wait rather than fail with EAGAIN.
                let length = socklen_t(MemoryLayout<sockaddr_un>.size)
                try withUnsafePointer(to: &address) { pointer throws(SystemCallError) in
                    try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw throws(SystemCallError) in
                        try connect(fd, raw, length, timeout: timeout)
                    }
                }
                try Syscall.setNonBlocking(fd)
            } catch {
                Syscall.close(fd)
                throw error
            }
            return fd
        } catch {
            throw .connectFailed(endpoint: endpoint, reason: lowercasedFirst(error.reason))
        }
    }

    /// Connects `fd`; when the connect is in progress (a non-blocking socket, or a signal came), waits with poll(2)
    /// for at most `timeout` and reads how it ended.
    private static func connect(
        _ fd: Int32,
        _ address: UnsafePointer<sockaddr>,
        _ length: socklen_t,
        timeout: Duration
    ) throws(SystemCallError) {
        guard try Syscall.connect(fd, address, length) == .inProgress else { return }
        let deadline = ContinuousClock.now + timeout
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { throw SystemCallError("connect", errno: ETIMEDOUT) }
            let (seconds, attoseconds) = left.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            guard try Syscall.poll(fd, events: Int16(POLLOUT), milliseconds: milliseconds) != 0 else { continue }
            let error = try Syscall.pendingError(fd)
            guard error == 0 else { throw SystemCallError("connect", errno: error) }
            return
        }
    }

    private static func lowercasedFirst(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.lowercased() + text.dropFirst()
    }
}
