import Foundation
import Glibc

/// One sd_notify datagram: `VARIABLE=value` lines, with the time it arrived.
struct Notification: CustomStringConvertible {
    /// The datagram's text.
    let text: String
    /// Its assignments, by variable.
    let values: [String: String]
    /// When it arrived (monotonic).
    let arrival: ContinuousClock.Instant

    init(text: String, arrival: ContinuousClock.Instant) {
        self.text = text
        self.arrival = arrival
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        self.values = values
    }

    var description: String { text.replacingOccurrences(of: "\n", with: " | ") }
}

/// An AF_UNIX datagram socket the test owns, standing in for systemd's notification socket: a subd started with
/// `NOTIFY_SOCKET=<path>` sends its sd_notify(3) datagrams here.
final class NotifySocket {
    /// The socket's path, for `NOTIFY_SOCKET`.
    let path: String
    private let fd: Int32
    /// Every datagram received so far, oldest first.
    private(set) var received: [Notification] = []
    private var unread = 0

    /// Binds a fresh socket under /tmp.
    init() throws {
        path = "/tmp/subd-notify-\(UUID().uuidString.prefix(8)).sock"
        var address = try TestAddress.unix(path)
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError.system("socket(AF_UNIX, SOCK_DGRAM)", errno) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else {
            let code = errno
            Glibc.close(fd)
            throw HarnessError.system("bind \(path)", code)
        }
    }

    deinit {
        Glibc.close(fd)
        unlink(path)
    }

    /// The environment entry that points subd here.
    var environment: [String: String?] { ["NOTIFY_SOCKET": path] }

    /// The next datagram not returned before, waiting up to `timeout` seconds; nil when none came.
    func next(timeout: TimeInterval) throws -> Notification? {
        if unread < received.count {
            defer { unread += 1 }
            return received[unread]
        }
        guard try receive(timeout: timeout) else { return nil }
        defer { unread += 1 }
        return received[unread]
    }

    /// Skips datagrams until one has `variable` (with `value`, when given); fails after `timeout` seconds, listing
    /// what did arrive.
    @discardableResult
    func waitFor(_ variable: String, value: String? = nil, timeout: TimeInterval = 10) throws -> Notification {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0, let notification = try next(timeout: left) else {
                let what = value.map { "\(variable)=\($0)" } ?? variable
                throw HarnessError.timeout(
                    "no \(what) in \(timeout) s; received: \(received.map(\.description))")
            }
            if let found = notification.values[variable], value == nil || found == value { return notification }
        }
    }

    /// Reads every datagram already queued, without waiting.
    func drain() throws {
        while try receive(timeout: 0) {}
    }

    /// Receives one datagram into `received`; false when none arrived within `timeout` seconds.
    private func receive(timeout: TimeInterval) throws -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, Int32(max(0, timeout) * 1000))
        guard ready > 0 else {
            if ready < 0 && errno != EINTR { throw HarnessError.system("poll notify socket", errno) }
            return false
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        guard count >= 0 else { throw HarnessError.system("recv notify socket", errno) }
        received.append(Notification(text: String(decoding: buffer[..<count], as: UTF8.self), arrival: .now))
        return true
    }
}
