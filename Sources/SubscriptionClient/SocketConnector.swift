import Glibc

/// Opens a connected, non-blocking, close-on-exec stream socket to an ``Endpoint``. Blocking (name lookup and
/// a bounded wait for the TCP handshake): call it off the cooperative thread pool.
enum SocketConnector {
    /// Connects to `endpoint`, trying every address a TCP host resolves to, each for at most `timeout`.
    ///
    /// - Throws: ``ClientError/connectFailed(endpoint:reason:)`` with the last failure.
    static func connect(to endpoint: Endpoint, timeout: Duration) throws(ClientError) -> Int32 {
        switch endpoint {
        case .tcp(let host, let port):
            return try connectTCP(host: host, port: port, timeout: timeout, endpoint: endpoint.description)
        case .unix(let path):
            return try connectUnix(path: path, endpoint: endpoint.description)
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
            let reason = status == EAI_SYSTEM ? errnoText(errno) : String(cString: gai_strerror(status))
            throw .connectFailed(endpoint: endpoint, reason: lowercasedFirst(reason))
        }
        defer { freeaddrinfo(list) }
        var lastErrno = ECONNREFUSED
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                lastErrno = errno
                continue
            }
            let error = connectNonBlocking(fd, info.pointee.ai_addr, info.pointee.ai_addrlen, timeout: timeout)
            if error == 0 {
                var one: Int32 = 1
                _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                return fd
            }
            lastErrno = error
            _ = close(fd)
        }
        throw .connectFailed(endpoint: endpoint, reason: errnoText(lastErrno))
    }

    /// Starts a non-blocking connect and waits for it with poll(2). Returns 0 or the errno of the failure.
    private static func connectNonBlocking(
        _ fd: Int32,
        _ address: UnsafePointer<sockaddr>,
        _ length: socklen_t,
        timeout: Duration
    ) -> Int32 {
        guard setNonBlocking(fd) else { return errno }
        if Glibc.connect(fd, address, length) == 0 { return 0 }
        guard errno == EINPROGRESS || errno == EINTR else { return errno }
        let deadline = ContinuousClock.now + timeout
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return ETIMEDOUT }
            let (seconds, attoseconds) = left.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if ready == 0 { continue }
            var error: Int32 = 0
            var size = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 else { return errno }
            return error
        }
    }

    private static func connectUnix(path: String, endpoint: String) throws(ClientError) -> Int32 {
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
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .connectFailed(endpoint: endpoint, reason: errnoText(errno)) }
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0, setNonBlocking(fd) else {
            let error = errno
            _ = close(fd)
            throw .connectFailed(endpoint: endpoint, reason: errnoText(error))
        }
        return fd
    }

    static func setNonBlocking(_ fd: Int32) -> Bool {
        let flags = fcntl(fd, F_GETFL)
        return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0
    }

    /// strerror(3) text starting lowercase, e.g. `connection refused`.
    static func errnoText(_ code: Int32) -> String {
        lowercasedFirst(String(cString: strerror(code)))
    }

    private static func lowercasedFirst(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.lowercased() + text.dropFirst()
    }
}
