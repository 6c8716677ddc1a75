import Dispatch
import Glibc
import SubscriptionSystem
import XCTest

@testable import SubscriptionClient

/// The far end of a socket pair, played by a test: it reads what the client sent and writes what a server
/// would. Reads wait at most `timeout` (on a Dispatch thread, not the cooperative pool), so a broken client
/// fails the test instead of hanging it.
final class ScriptedPeer: @unchecked Sendable {
    enum PeerError: Error {
        case timedOut
        case closed
    }

    private let fd: Int32
    private var pending: [UInt8] = []
    private let timeout: Int32 = 5000

    init(fd: Int32) {
        self.fd = fd
    }

    deinit {
        _ = Glibc.close(fd)
    }

    /// Makes a socket pair, hands one end to a ``SubscriptionClient`` (HELLO with `name`) and plays the
    /// server's part of the handshake.
    static func connectedClient(name: String? = nil) async throws -> (SubscriptionClient, ScriptedPeer) {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else {
            throw PeerError.closed
        }
        XCTAssertNoThrow(try Syscall.setNonBlocking(fds[0]))
        let peer = ScriptedPeer(fd: fds[1])
        let hello = try Command.hello(name: name, token: nil)
        let socket = fds[0]
        let client = Task {
            try await SubscriptionClient.handshake(socket: socket, endpoint: .unix(path: "pair"), hello: hello)
        }
        try await peer.expectLine(name.map { "HELLO name=\($0)" } ?? "HELLO")
        peer.send("+OK subd test proto=1 session=1\n")
        return (try await client.value, peer)
    }

    /// The next line the client sent, without its LF.
    func readLine() async throws -> String {
        while true {
            if let lf = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[..<lf], as: UTF8.self)
                pending.removeSubrange(...lf)
                return line
            }
            try await fill()
        }
    }

    /// Reads the next line and checks that it is `expected`.
    func expectLine(_ expected: String, file: StaticString = #filePath, line: UInt = #line) async throws {
        let got = try await readLine()
        XCTAssertEqual(got, expected, file: file, line: line)
    }

    /// The next `count` bytes the client sent.
    func readBytes(_ count: Int) async throws -> [UInt8] {
        while pending.count < count { try await fill() }
        defer { pending.removeSubrange(..<count) }
        return Array(pending[..<count])
    }

    /// Waits until the client closes its end; throws when it sends something instead.
    func expectEnd() async throws {
        do {
            try await fill()
            XCTFail("expected the end, got \(pending)")
        } catch PeerError.closed {
        }
    }

    func send(_ text: String) {
        send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard written > 0 else { return XCTFail("peer write failed: errno \(errno)") }
            offset += written
        }
    }

    /// Closes the server's end of the connection.
    func hangUp() {
        _ = shutdown(fd, Int32(SHUT_RDWR))
    }

    private func fill() async throws {
        let chunk: [UInt8] = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { [fd, timeout] in
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&descriptor, 1, timeout) == 1 else {
                    return continuation.resume(throwing: PeerError.timedOut)
                }
                var buffer = [UInt8](repeating: 0, count: 65536)
                let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                guard count > 0 else { return continuation.resume(throwing: PeerError.closed) }
                continuation.resume(returning: Array(buffer[..<count]))
            }
        }
        pending += chunk
    }
}
