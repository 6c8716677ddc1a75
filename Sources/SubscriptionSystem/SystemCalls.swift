import CSubdShim

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A failed system call: what was being done and the errno it gave.
public struct SystemCallError: Error, CustomStringConvertible, Sendable {
    /// What the program was doing, e.g. `bind 127.0.0.1:7827`.
    public var operation: String
    /// The errno value (0 when the failure has no errno, e.g. a name that does not resolve).
    public var errno: Int32

    /// Makes an error from an operation and an errno value.
    public init(_ operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    /// strerror(3) of ``errno``, e.g. `Connection refused`.
    public var reason: String { String(cString: strerror(errno)) }

    public var description: String {
        errno == 0 ? operation : "\(operation): \(reason)"
    }
}

/// The result of an I/O call on a non-blocking descriptor.
public enum IOResult: Equatable, Sendable {
    /// This many bytes were moved (0 on read means end of stream).
    case processed(Int)
    /// The call would block (EAGAIN/EWOULDBLOCK).
    case wouldBlock
}

/// Every system call the server and the client make goes through here once (swift-nio `System.swift`): EINTR is
/// retried, EAGAIN becomes `.wouldBlock`, EBADF and EFAULT are bugs of the caller (a precondition failure), and
/// other failures throw a ``SystemCallError`` naming the operation.
public enum Syscall {
    /// Calls `body` until it stops failing with EINTR; returns its result or throws.
    @inlinable @inline(__always)
    public static func retrying(_ operation: @autoclosure () -> String, _ body: () -> Int) throws(SystemCallError)
        -> IOResult
    {
        while true {
            let result = body()
            if result >= 0 { return .processed(result) }
            let error = Glibc.errno
            switch error {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case EBADF, EFAULT:
                preconditionFailure("\(operation()) failed with \(error): a bug in the caller (descriptor misuse)")
            default: throw SystemCallError(operation(), errno: error)
            }
        }
    }

    /// read(2) into `buffer`.
    @inlinable
    public static func read(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> IOResult {
        try retrying("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// writev(2) of `count` iovecs.
    @inlinable
    public static func writev(_ fd: Int32, _ vectors: UnsafePointer<iovec>, _ count: Int) throws(SystemCallError)
        -> IOResult
    {
        try retrying("writev") { Glibc.writev(fd, vectors, Int32(count)) }
    }

    /// send(2) of `buffer` with MSG_NOSIGNAL, so a peer that went away gives EPIPE instead of SIGPIPE.
    public static func send(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> IOResult {
        try retrying("send") { Glibc.send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL)) }
    }

    /// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC; nil when no connection is waiting.
    public static func accept(_ fd: Int32) throws(SystemCallError) -> Int32? {
        switch try retrying("accept", { Int(subd_accept_nonblocking(fd, nil, nil)) }) {
        case .processed(let client): return Int32(client)
        case .wouldBlock: return nil
        }
    }

    /// open(2) of a file for reading, close-on-exec (a `/proc` file, say).
    public static func openForReading(_ path: String) throws(SystemCallError) -> Int32 {
        switch try retrying("open \(path)", { Int(Glibc.open(path, O_RDONLY | O_CLOEXEC)) }) {
        case .processed(let fd): return Int32(fd)
        case .wouldBlock: throw SystemCallError("open \(path)", errno: EAGAIN)
        }
    }

    /// socket(2) of a close-on-exec stream socket in `family` (AF_INET, AF_INET6, AF_UNIX).
    public static func streamSocket(family: Int32) throws(SystemCallError) -> Int32 {
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemCallError("socket", errno: Glibc.errno) }
        return fd
    }

    /// How a ``connect(_:_:_:)`` went.
    public enum ConnectResult: Equatable, Sendable {
        /// The connection is made.
        case connected
        /// A non-blocking connect has started (EINPROGRESS, or EINTR, after which the kernel goes on with it):
        /// wait with ``poll(_:events:milliseconds:)`` for POLLOUT, then read ``pendingError(_:)``.
        case inProgress
    }

    /// connect(2) to `address`. A blocking socket waits; a non-blocking one may return ``ConnectResult/inProgress``.
    public static func connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t)
        throws(SystemCallError) -> ConnectResult
    {
        if Glibc.connect(fd, address, length) == 0 { return .connected }
        let error = Glibc.errno
        switch error {
        case EINPROGRESS, EINTR: return .inProgress
        case EBADF, EFAULT: preconditionFailure("connect failed with \(error): a bug in the caller (descriptor misuse)")
        default: throw SystemCallError("connect", errno: error)
        }
    }

    /// poll(2) of one descriptor for `events`, for at most `milliseconds`. Returns the events that happened, or 0
    /// when the time ran out or a signal interrupted the wait (the caller works out what time is left and calls
    /// again).
    public static func poll(_ fd: Int32, events: Int16, milliseconds: Int32) throws(SystemCallError) -> Int16 {
        var descriptor = pollfd(fd: fd, events: events, revents: 0)
        let ready = Glibc.poll(&descriptor, 1, milliseconds)
        if ready > 0 { return descriptor.revents }
        if ready == 0 || Glibc.errno == EINTR { return 0 }
        throw SystemCallError("poll", errno: Glibc.errno)
    }

    /// The error a socket's non-blocking connect ended with (getsockopt SO_ERROR); 0 when it connected.
    public static func pendingError(_ fd: Int32) throws(SystemCallError) -> Int32 {
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 else {
            throw SystemCallError("getsockopt SO_ERROR", errno: Glibc.errno)
        }
        return error
    }

    /// Makes a descriptor non-blocking (a connected client socket, or a socket that systemd passes in).
    public static func setNonBlocking(_ fd: Int32) throws(SystemCallError) {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw SystemCallError("fcntl O_NONBLOCK", errno: Glibc.errno)
        }
    }

    /// Sets an integer socket option, throwing on failure.
    public static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32, _ what: String)
        throws(SystemCallError)
    {
        var value = value
        guard setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw SystemCallError("setsockopt \(what)", errno: Glibc.errno)
        }
    }

    /// shutdown(2) of the write side: the peer reads EOF after what was sent. Errors (the peer is gone already) are
    /// not actionable and are ignored; the close that follows reports nothing either.
    public static func shutdownWrite(_ fd: Int32) {
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    /// close(2); errors other than EBADF are not actionable after a close and are ignored.
    public static func close(_ fd: Int32) {
        let result = Glibc.close(fd)
        precondition(
            result == 0 || Glibc.errno != EBADF, "close(\(fd)) of a descriptor that is not open: a bug in the caller")
    }
}

/// CLOCK_MONOTONIC: never goes back; a vDSO call, no system call.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary point.
    public static func nanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
