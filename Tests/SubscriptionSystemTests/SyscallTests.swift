import Glibc
import SubscriptionSystem
import XCTest

/// The system-call wrapper on a non-blocking socket pair: EAGAIN is `.wouldBlock`, end of stream is
/// `.processed(0)`, and a failure carries errno and the operation.
final class SyscallTests: XCTestCase {
    private var fds: [Int32] = [-1, -1]

    override func setUpWithError() throws {
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        try Syscall.setNonBlocking(fds[0])
        try Syscall.setNonBlocking(fds[1])
    }

    override func tearDown() {
        for fd in fds where fd >= 0 { Syscall.close(fd) }
    }

    func testReadWithNothingToReadWouldBlock() throws {
        var buffer = [UInt8](repeating: 0, count: 16)
        let result = try buffer.withUnsafeMutableBytes { try Syscall.read(fds[0], $0) }
        XCTAssertEqual(result, .wouldBlock)
    }

    func testSendThenReadMovesTheBytes() throws {
        let sent = try Array("hello".utf8).withUnsafeBytes { try Syscall.send(fds[1], $0) }
        XCTAssertEqual(sent, .processed(5))
        var buffer = [UInt8](repeating: 0, count: 16)
        let read = try buffer.withUnsafeMutableBytes { try Syscall.read(fds[0], $0) }
        XCTAssertEqual(read, .processed(5))
        XCTAssertEqual(Array(buffer.prefix(5)), Array("hello".utf8))
    }

    func testEndOfStreamIsZeroBytes() throws {
        Syscall.close(fds[1])
        fds[1] = -1
        var buffer = [UInt8](repeating: 0, count: 16)
        XCTAssertEqual(try buffer.withUnsafeMutableBytes { try Syscall.read(fds[0], $0) }, .processed(0))
    }

    /// A full socket buffer is `.wouldBlock`, not an error.
    func testSendToAFullBufferWouldBlock() throws {
        let chunk = [UInt8](repeating: 0x61, count: 64 * 1024)
        var result = IOResult.processed(0)
        for _ in 0..<1000 {
            result = try chunk.withUnsafeBytes { try Syscall.send(fds[1], $0) }
            if result == .wouldBlock { break }
        }
        XCTAssertEqual(result, .wouldBlock)
    }

    /// Sending to a peer that went away throws EPIPE (MSG_NOSIGNAL: the process is not killed by SIGPIPE).
    func testSendToAClosedPeerThrowsWithErrnoAndOperation() {
        Syscall.close(fds[0])
        fds[0] = -1
        XCTAssertThrowsError(try Array("x".utf8).withUnsafeBytes { try Syscall.send(fds[1], $0) }) { error in
            guard let error = error as? SystemCallError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.errno, EPIPE)
            XCTAssertEqual(error.operation, "send")
            XCTAssertEqual(error.description, "send: \(String(cString: strerror(EPIPE)))")
        }
    }

    func testConnectToNothingListeningThrows() throws {
        let fd = try Syscall.streamSocket(family: AF_UNIX)
        defer { Syscall.close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array("/nonexistent/subd.sock".utf8)) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.size)
        XCTAssertThrowsError(
            try withUnsafePointer(to: &address) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { try Syscall.connect(fd, $0, length) }
            }
        ) { error in
            XCTAssertEqual((error as? SystemCallError)?.errno, ENOENT)
        }
    }
}
