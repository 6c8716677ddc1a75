import Dispatch
import Glibc
import XCTest

@testable import SubscriptionClient

/// Real sockets: TCP on 127.0.0.1 and a Unix socket path.
final class ConnectTests: XCTestCase {
    func testRefusedTCPConnection() async throws {
        let listener = try TCPListener()
        let port = listener.port
        listener.close()
        await assertThrowsClientError(
            try await SubscriptionClient.connect(to: .tcp(host: "127.0.0.1", port: port)),
            .connectFailed(endpoint: "127.0.0.1:\(port)", reason: "connection refused"))
    }

    func testMissingUnixSocket() async throws {
        await assertThrowsClientError(
            try await SubscriptionClient.connect(to: .unix(path: "/nonexistent/subd.sock")),
            .connectFailed(endpoint: "unix:/nonexistent/subd.sock", reason: "no such file or directory"))
    }

    func testUnresolvableHost() async throws {
        do {
            _ = try await SubscriptionClient.connect(to: .tcp(host: "no-such-host.invalid", port: 1))
            XCTFail("connected")
        } catch {
            guard case .connectFailed(let endpoint, _) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(endpoint, "no-such-host.invalid:1")
        }
    }

    func testConnectsOverTCP() async throws {
        let listener = try TCPListener()
        let port = listener.port
        let client = Task { try await SubscriptionClient.connect(to: .tcp(host: "127.0.0.1", port: port), name: "t") }
        let peer = try await listener.accept()
        try await peer.expectLine("HELLO name=t")
        peer.send("+OK subd x proto=1 session=2\n")
        let connected = try await client.value
        XCTAssertEqual(connected.greeting, "subd x proto=1 session=2")
        let published = Task { try await connected.publish("X", text: "hi") }
        try await peer.expectLine("PUB X 2")
        try await peer.expectLine("hi")
        peer.send("+OK 0\n")
        let receivers = try await published.value
        XCTAssertEqual(receivers, 0)
    }
}

/// A listening TCP socket on 127.0.0.1 and an ephemeral port.
final class TCPListener: @unchecked Sendable {
    private var fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && listen(fd, 4) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else { throw ScriptedPeer.PeerError.closed }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close() }

    func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
    }

    /// Accepts one connection (waiting at most 5 s) and plays it as a ``ScriptedPeer``.
    func accept() async throws -> ScriptedPeer {
        let fd = self.fd
        let accepted: Int32 = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&descriptor, 1, 5000) == 1 else { return continuation.resume(returning: -1) }
                continuation.resume(returning: Glibc.accept(fd, nil, nil))
            }
        }
        guard accepted >= 0 else { throw ScriptedPeer.PeerError.timedOut }
        return ScriptedPeer(fd: accepted)
    }
}
