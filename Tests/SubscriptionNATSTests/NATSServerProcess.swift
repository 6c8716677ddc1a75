import Foundation
import XCTest

/// A real `nats-server` started for a test: its configuration file and log in the test's directory, its ports
/// read back from its log (it binds free ones itself: `-1` in the configuration), killed by the test's tear-down
/// whatever happens.
final class NATSServerProcess: @unchecked Sendable {
    /// What to put in the configuration.
    struct Configuration {
        /// `server_name`.
        var name = "n1"
        /// The client port; nil: a free one (`-1`).
        var port: Int?
        /// Start the monitoring endpoint (`http`) on a free port.
        var monitoring = false
        /// `authorization { token }`.
        var token: String?
        /// `authorization { user, password }`.
        var user: (name: String, password: String)?
        /// `max_payload`.
        var maxPayload: Int?
        /// Enable JetStream with a store under the test's directory and small limits.
        var jetStream = false
        /// Join a cluster: the route URLs to other servers (empty: the first server of a cluster).
        var clusterRoutes: [String]?
        /// The cluster (route) port; nil: a free one (`-1`). A JetStream cluster needs every server's routes
        /// configured, so its ports are chosen first (``freeLoopbackPort()``).
        var clusterPort: Int?
    }

    let configuration: Configuration
    let process = Process()
    let logPath: String
    /// The client port it listens on.
    private(set) var port = 0
    /// The monitoring port, with ``Configuration/monitoring``.
    private(set) var monitorPort: Int?
    /// The cluster (route) port, in a cluster.
    private(set) var routePort: Int?

    /// The binary: `$NATS_SERVER`, else the first `nats-server` found in the usual places.
    static func binary() throws -> String {
        if let path = ProcessInfo.processInfo.environment["NATS_SERVER"] { return path }
        for directory in ["/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin"] {
            let path = directory + "/nats-server"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw XCTSkip("nats-server is not installed (`make deps-test` installs Debian's)")
    }

    /// Starts a server in `directory` and waits until it is ready (its ports are in its log).
    init(_ configuration: Configuration, directory: String) throws {
        self.configuration = configuration
        let base = directory + "/" + configuration.name
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let configPath = base + "/server.conf"
        logPath = base + "/server.log"
        try Self.text(configuration, store: base + "/js").write(toFile: configPath, atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: try Self.binary())
        process.arguments = ["-c", configPath]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: logPath)
        try process.run()
        do {
            try waitForReady()
        } catch {
            kill()  // the caller never got it, so its tear-down cannot
            throw error
        }
    }

    private static func text(_ configuration: Configuration, store: String) -> String {
        var lines = ["server_name: \(configuration.name)", "listen: 127.0.0.1:\(configuration.port ?? -1)"]
        if configuration.monitoring { lines.append("http: 127.0.0.1:-1") }
        if let token = configuration.token { lines.append("authorization { token: \"\(token)\" }") }
        if let user = configuration.user {
            lines.append("authorization { user: \"\(user.name)\", password: \"\(user.password)\" }")
        }
        if let maxPayload = configuration.maxPayload { lines.append("max_payload: \(maxPayload)") }
        if configuration.jetStream {
            lines.append("jetstream { store_dir: \"\(store)\", max_memory_store: 32MB, max_file_store: 64MB }")
        }
        if let routes = configuration.clusterRoutes {
            let list = routes.map { "\"\($0)\"" }.joined(separator: ", ")
            let port = configuration.clusterPort ?? -1
            lines.append("cluster { name: subd-test, listen: 127.0.0.1:\(port), routes: [\(list)] }")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The server's log so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Waits for `Server is ready` and every listener's line, and reads the ports from the log. (The route listener's
    /// line may come after `Server is ready`: a fresh-clone run read the log between the two and failed.)
    private func waitForReady() throws {
        let deadline = Date().addingTimeInterval(10)
        var markers = ["Server is ready", "Listening for client connections on "]
        if configuration.monitoring { markers.append("Starting http monitor on ") }
        if configuration.clusterRoutes != nil { markers.append("Listening for route connections on ") }
        while Date() < deadline {
            let log = self.log
            if markers.allSatisfy({ log.contains($0) }) {
                port = try Self.port(after: "Listening for client connections on ", in: log)
                if configuration.monitoring { monitorPort = try Self.port(after: "Starting http monitor on ", in: log) }
                if configuration.clusterRoutes != nil {
                    routePort = try Self.port(after: "Listening for route connections on ", in: log)
                }
                return
            }
            guard process.isRunning else { throw HarnessFailure("nats-server exited: \(log)") }
            usleep(10_000)
        }
        throw HarnessFailure("nats-server not ready in 10 s: \(log)")
    }

    private static func port(after marker: String, in log: String) throws -> Int {
        guard let range = log.range(of: marker, options: .backwards) else {
            throw HarnessFailure("no '\(marker)' in the log: \(log)")
        }
        let address = log[range.upperBound...].prefix { !$0.isWhitespace }
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]) else {
            throw HarnessFailure("no port after '\(marker)': \(address)")
        }
        return port
    }

    /// `127.0.0.1:<client port>`.
    var address: String { "127.0.0.1:\(port)" }

    /// `nats-route://127.0.0.1:<route port>`.
    var routeURL: String { "nats-route://127.0.0.1:\(routePort ?? 0)" }

    /// Kills it (SIGKILL) and waits for it to exit.
    func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Polls `GET /healthz?js-enabled-only=true` on the monitoring port until it answers `ok` (JetStream is
    /// up), for at most `timeout` seconds.
    func waitForJetStream(timeout: TimeInterval = 20) throws {
        guard let monitorPort else { throw HarnessFailure("no monitoring port") }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let body = try? httpGet(port: monitorPort, path: "/healthz?js-enabled-only=true"),
                body.contains("\"ok\"")
            {
                return
            }
            usleep(20_000)
        }
        throw HarnessFailure("JetStream not healthy in \(timeout) s: \(log)")
    }
}

/// A failure of the test harness (not of the code under test).
struct HarnessFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A TCP port on 127.0.0.1 that was just bound and closed, so nothing listens on it (until someone binds it).
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw HarnessFailure("socket") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw HarnessFailure("bind 127.0.0.1:0") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A minimal HTTP/1.0 GET over a loopback socket; the response's body.
func httpGet(port: Int, path: String) throws -> String {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw HarnessFailure("socket") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
    guard connected else { throw HarnessFailure("connect to monitoring port \(port)") }
    let request = Array("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".utf8)
    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var response: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count <= 0 { break }
        response += buffer[0..<count]
    }
    let text = String(decoding: response, as: UTF8.self)
    return text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
}
