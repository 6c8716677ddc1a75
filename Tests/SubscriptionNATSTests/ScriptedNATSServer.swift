import Foundation
import TestSupport
import XCTest

/// The server's side of one NATS connection, played by a test over a real loopback socket: for what a real
/// nats-server cannot be made to do (stop answering PINGs while the connection stays up).
final class ScriptedNATSServer: @unchecked Sendable {
    // @unchecked: used from the test's thread only.
    private let listener: Int32
    private var connection: Int32 = -1
    private var received: [UInt8] = []
    /// The port it listens on.
    let port: Int

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw HarnessFailure("socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 4) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard ok else {
            close(listener)
            throw HarnessFailure("bind/listen 127.0.0.1:0")
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit {
        if connection >= 0 { close(connection) }
        close(listener)
    }

    /// Waits for the client to connect.
    func accept(timeout: Int32 = 5000) throws {
        var descriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, timeout) == 1 else { throw HarnessFailure("no connection") }
        connection = Foundation.accept(listener, nil, nil)
        guard connection >= 0 else { throw HarnessFailure("accept") }
    }

    /// Writes `text`.
    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Foundation.send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads until what the client sent contains `marker`; returns everything up to and including it (and keeps
    /// the rest).
    func read(until marker: String, timeout: TimeInterval = 5) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        let needle = Array(marker.utf8)
        while true {
            if let range = find(needle) {
                let text = String(decoding: received[..<range.upperBound], as: UTF8.self)
                received.removeSubrange(..<range.upperBound)
                return text
            }
            let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            var descriptor = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            guard left > 0, poll(&descriptor, 1, left) == 1 else {
                throw HarnessFailure(
                    "no '\(marker)' from the client; got '\(String(decoding: received, as: UTF8.self))'")
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw HarnessFailure("the client closed before '\(marker)'") }
            received += buffer[0..<count]
        }
    }

    /// True once the client closed its side (read returns 0), within `timeout`.
    func clientClosed(timeout: TimeInterval = 5) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while deadline.timeIntervalSinceNow > 0 {
            var descriptor = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 50) >= 0 else { return false }
            if descriptor.revents == 0 { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return true }
        }
        return false
    }

    private func find(_ needle: [UInt8]) -> Range<Int>? {
        guard received.count >= needle.count else { return nil }
        for start in 0...(received.count - needle.count)
        where received[start..<(start + needle.count)].elementsEqual(needle) {
            return start..<(start + needle.count)
        }
        return nil
    }
}
