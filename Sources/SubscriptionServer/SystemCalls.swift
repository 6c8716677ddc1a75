#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CSubdShim

/// A failed system call: what was being done and the errno it gave.
public struct SystemCallError: Error, CustomStringConvertible, Sendable {
    /// What the daemon was doing, e.g. `bind 127.0.0.1:7827`.
    public var operation: String
    /// The errno value.
    public var errno: Int32

    /// Makes an error from an operation and an errno value.
    public init(_ operation: String, errno: Int32) {
        self.operation = operation
        self.errno = errno
    }

    public var description: String {
        errno == 0 ? operation : "\(operation): \(String(cString: strerror(errno)))"
    }
}

/// The result of an I/O call on a non-blocking descriptor.
enum IOResult: Equatable {
    /// This many bytes were moved (0 on read means end of stream).
    case processed(Int)
    /// The call would block (EAGAIN/EWOULDBLOCK).
    case wouldBlock
}

/// Every system call the server makes goes through here once (swift-nio `System.swift`): EINTR is retried,
/// EAGAIN becomes `.wouldBlock`, and other failures throw a ``SystemCallError`` naming the operation.
enum Syscall {
    /// Calls `body` until it stops failing with EINTR; returns its result or throws.
    @inline(__always)
    static func retrying(_ operation: @autoclosure () -> String, _ body: () -> Int) throws(SystemCallError) -> IOResult {
        while true {
            let result = body()
            if result >= 0 { return .processed(result) }
            let error = Glibc.errno
            switch error {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case EBADF, EFAULT:
                preconditionFailure("\(operation()) failed with \(error): a bug in subd (descriptor misuse)")
            default: throw SystemCallError(operation(), errno: error)
            }
        }
    }

    /// read(2) into `buffer`.
    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> IOResult {
        try retrying("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// writev(2) of `count` iovecs.
    static func writev(_ fd: Int32, _ vectors: UnsafePointer<iovec>, _ count: Int) throws(SystemCallError) -> IOResult {
        try retrying("writev") { Glibc.writev(fd, vectors, Int32(count)) }
    }

    /// accept4(2) with SOCK_NONBLOCK | SOCK_CLOEXEC; nil when no connection is waiting.
    static func accept(_ fd: Int32) throws(SystemCallError) -> Int32? {
        switch try retrying("accept", { Int(subd_accept_nonblocking(fd, nil, nil)) }) {
        case .processed(let client): return Int32(client)
        case .wouldBlock: return nil
        }
    }

    /// Makes a descriptor non-blocking (needed for sockets that systemd passes in).
    static func setNonBlocking(_ fd: Int32) throws(SystemCallError) {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw SystemCallError("fcntl O_NONBLOCK", errno: Glibc.errno)
        }
    }

    /// Sets an integer socket option, throwing on failure.
    static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32, _ what: String) throws(SystemCallError) {
        var value = value
        guard setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw SystemCallError("setsockopt \(what)", errno: Glibc.errno)
        }
    }

    /// close(2); errors other than EBADF are not actionable after a close and are ignored.
    static func close(_ fd: Int32) {
        let result = Glibc.close(fd)
        precondition(result == 0 || Glibc.errno != EBADF, "close(\(fd)) of a descriptor that is not open: a bug in subd")
    }
}
