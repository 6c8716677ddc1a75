import Glibc

/// A blocking TCP connection: every system call on it is wrapped here once.
struct BenchSocket: Sendable {
    /// The connected socket's file descriptor.
    let fd: Int32

    /// Opens a blocking TCP connection to `host:port` with `TCP_NODELAY` set.
    static func connect(host: String, port: String) throws(BenchError) -> BenchSocket {
        let target = "\(host):\(port)"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, port, &hints, &list)
        guard status == 0, let first = list else {
            throw .daemon("cannot resolve \(target): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = ECONNREFUSED
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                lastError = errno
                continue
            }
            var result: Int32
            repeat {
                result = Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen)
            } while result < 0 && errno == EINTR
            if result == 0 {
                var one: Int32 = 1
                _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                return BenchSocket(fd: fd)
            }
            lastError = errno
            Glibc.close(fd)
        }
        throw .connect(target: target, errno: lastError)
    }

    /// Writes all of `bytes`, blocking until the kernel took them.
    func writeAll(_ bytes: UnsafeRawBufferPointer, what: String) throws(BenchError) {
        guard var pointer = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let written = Glibc.send(fd, pointer, remaining, Int32(MSG_NOSIGNAL))
            if written < 0 {
                if errno == EINTR { continue }
                throw .io(what: what, errno: errno)
            }
            pointer += written
            remaining -= written
        }
    }

    /// Writes what the kernel takes at once, without blocking; returns how many bytes that was (0 when the socket's
    /// send buffer is full).
    func writeAvailable(_ bytes: UnsafeRawBufferPointer, what: String) throws(BenchError) -> Int {
        while true {
            let written = Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            if written >= 0 { return written }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return 0 }
            throw .io(what: what, errno: errno)
        }
    }

    /// Waits up to `milliseconds` until the socket can take more bytes; false when it could not within that time.
    func waitWritable(milliseconds: Int32) throws(BenchError) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        while true {
            let ready = poll(&entry, 1, milliseconds)
            if ready >= 0 { return ready > 0 }
            if errno == EINTR { continue }
            throw .io(what: "waiting to write", errno: errno)
        }
    }

    /// Makes a blocking `read` give up with `EAGAIN` after `seconds` without a byte (`SO_RCVTIMEO`).
    func setReceiveTimeout(seconds: Int) throws(BenchError) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        guard setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size)) == 0 else {
            throw .io(what: "setting SO_RCVTIMEO", errno: errno)
        }
    }

    /// Writes a short command line such as `SUB BENCH\n`.
    func writeAll(_ text: String, what: String) throws(BenchError) {
        try withBytes(Array(text.utf8)) { bytes throws(BenchError) in try writeAll(bytes, what: what) }
    }

    /// Reads what is available (blocking until at least one byte); returns 0 at end of stream.
    func read(into buffer: UnsafeMutableRawBufferPointer, what: String) throws(BenchError) -> Int {
        while true {
            let count = Glibc.recv(fd, buffer.baseAddress, buffer.count, 0)
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw .io(what: what, errno: errno)
        }
    }

    /// Stops both directions, waking a thread blocked in `read`; errors are of no interest here.
    func shutdown() {
        _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Closes the descriptor.
    func close() {
        _ = Glibc.close(fd)
    }
}
