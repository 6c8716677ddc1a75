import Foundation

/// A real `nats-server` started for a test: its configuration file and log in the test's directory, its ports
/// read back from its log (it binds free ones itself: `-1` in the configuration), killed by the test's tear-down
/// whatever happens. Shared by the NATS client's tests and the cluster bridge's integration tests.
public final class NATSServerProcess: @unchecked Sendable {
    /// What to put in the configuration.
    public struct Configuration {
        /// `server_name`.
        public var name = "n1"
        /// The client port; nil: a free one (`-1`).
        public var port: Int?
        /// Start the monitoring endpoint (`http`) on a free port.
        public var monitoring = false
        /// `authorization { token }`.
        public var token: String?
        /// `authorization { user, password }`.
        public var user: (name: String, password: String)?
        /// `max_payload`.
        public var maxPayload: Int?
        /// Enable JetStream with a store under the test's directory and small limits.
        public var jetStream = false
        /// Join a cluster: the route URLs to other servers (empty: the first server of a cluster).
        public var clusterRoutes: [String]?
        /// The cluster (route) port; nil: a free one (`-1`). A JetStream cluster needs every server's routes
        /// configured, so its ports are chosen first (``freeLoopbackPort()``).
        public var clusterPort: Int?

        /// A configuration; every field as documented above.
        public init(
            name: String = "n1", port: Int? = nil, monitoring: Bool = false, token: String? = nil,
            user: (name: String, password: String)? = nil, maxPayload: Int? = nil, jetStream: Bool = false,
            clusterRoutes: [String]? = nil, clusterPort: Int? = nil
        ) {
            self.name = name
            self.port = port
            self.monitoring = monitoring
            self.token = token
            self.user = user
            self.maxPayload = maxPayload
            self.jetStream = jetStream
            self.clusterRoutes = clusterRoutes
            self.clusterPort = clusterPort
        }
    }

    /// What it was started with.
    public let configuration: Configuration
    /// The process.
    public let process = Process()
    /// Its log (stderr).
    public let logPath: String
    /// The client port it listens on.
    public private(set) var port = 0
    /// The monitoring port, with ``Configuration/monitoring``.
    public private(set) var monitorPort: Int?
    /// The cluster (route) port, in a cluster.
    public private(set) var routePort: Int?

    /// Why a test that needs `nats-server` is skipped (tests throw `XCTSkip(NATSServerProcess.notInstalled)`).
    public static let notInstalled = "nats-server is not installed (`make deps-test` installs Debian's)"

    /// The binary: `$NATS_SERVER`, else the first `nats-server` found in the usual places; nil when there is none.
    public static func binary() -> String? {
        if let path = ProcessInfo.processInfo.environment["NATS_SERVER"] { return path }
        for directory in ["/usr/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/sbin"] {
            let path = directory + "/nats-server"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Starts a server in `directory` and waits until it is ready (its ports are in its log).
    public init(_ configuration: Configuration, directory: String) throws {
        self.configuration = configuration
        let base = directory + "/" + configuration.name
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let configPath = base + "/server.conf"
        logPath = base + "/server.log"
        try Self.text(configuration, store: base + "/js").write(toFile: configPath, atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        guard let binary = Self.binary() else { throw HarnessFailure(Self.notInstalled) }
        process.executableURL = URL(fileURLWithPath: binary)
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
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Waits for `Server is ready` and every port line it needs in the log, and reads the ports. (The route listener's
    /// line may come after `Server is ready`: reading it at once failed a cluster test now and then.)
    private func waitForReady() throws {
        let deadline = Date().addingTimeInterval(10)
        var markers = ["Server is ready", Self.clientMarker]
        if configuration.monitoring { markers.append(Self.monitorMarker) }
        if configuration.clusterRoutes != nil { markers.append(Self.routeMarker) }
        while Date() < deadline {
            let log = self.log
            if markers.allSatisfy(log.contains) {
                port = try Self.port(after: Self.clientMarker, in: log)
                if configuration.monitoring { monitorPort = try Self.port(after: Self.monitorMarker, in: log) }
                if configuration.clusterRoutes != nil { routePort = try Self.port(after: Self.routeMarker, in: log) }
                return
            }
            guard process.isRunning else { throw HarnessFailure("nats-server exited: \(log)") }
            usleep(10_000)
        }
        throw HarnessFailure("nats-server not ready in 10 s: \(log)")
    }

    private static let clientMarker = "Listening for client connections on "
    private static let monitorMarker = "Starting http monitor on "
    private static let routeMarker = "Listening for route connections on "

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
    public var address: String { "127.0.0.1:\(port)" }

    /// `nats-route://127.0.0.1:<route port>`.
    public var routeURL: String { "nats-route://127.0.0.1:\(routePort ?? 0)" }

    /// Kills it (SIGKILL) and waits for it to exit.
    public func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Polls `GET /healthz?js-enabled-only=true` on the monitoring port until it answers `ok` (JetStream is
    /// up), for at most `timeout` seconds.
    public func waitForJetStream(timeout: TimeInterval = 20) throws {
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
public struct HarnessFailure: Error, CustomStringConvertible {
    /// What failed.
    public var description: String
    /// A failure described by `description`.
    public init(_ description: String) { self.description = description }
}

/// A TCP port on 127.0.0.1 that was just bound and closed, so nothing listens on it (until someone binds it).
public func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw HarnessFailure("socket") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { throw HarnessFailure("bind 127.0.0.1:0") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// A TCP socket connected to 127.0.0.1:`port` (the caller closes it); `what` names the peer in the error.
public func connectedLoopbackSocket(port: Int, what: String) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw HarnessFailure("socket") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
    guard connected else {
        close(fd)
        throw HarnessFailure("connect to \(what)")
    }
    return fd
}

/// A minimal HTTP/1.0 GET over a loopback socket; the response's body.
public func httpGet(port: Int, path: String) throws -> String {
    let fd = try connectedLoopbackSocket(port: port, what: "monitoring port \(port)")
    defer { close(fd) }
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

extension NATSServerProcess {
    /// Starts `count` servers joined in one cluster with JetStream and monitoring (server names `n1`, `n2`, ...), and
    /// waits until JetStream is up on each. A JetStream cluster wants every server's routes configured, so the route
    /// ports are chosen first. The servers are handed to `keep` (for the caller's tear-down) once all run; when one
    /// fails, those already started are stopped, so none is left behind. A route port found free may be taken by
    /// another process before its server binds it (tests run in parallel): then the cluster is started again on new
    /// ports, up to three times.
    public static func startCluster(
        count: Int = 3, directory: String, keep: (NATSServerProcess) -> Void
    ) throws -> [NATSServerProcess] {
        var attempt = 1
        while true {
            var started: [NATSServerProcess] = []
            do {
                let servers = try startClusterOnce(count: count, directory: directory) { started.append($0) }
                servers.forEach(keep)
                return servers
            } catch {
                for server in started { server.kill() }
                guard attempt < 3, "\(error)".contains("address already in use") else { throw error }
                attempt += 1
            }
        }
    }

    private static func startClusterOnce(
        count: Int, directory: String, started: (NATSServerProcess) -> Void
    ) throws -> [NATSServerProcess] {
        let ports = try (0..<count).map { _ in try freeLoopbackPort() }
        let routes = ports.map { "nats-route://127.0.0.1:\($0)" }
        var servers: [NATSServerProcess] = []
        for index in 0..<count {
            let server = try NATSServerProcess(
                Configuration(
                    name: "n\(index + 1)", monitoring: true, jetStream: true, clusterRoutes: routes,
                    clusterPort: ports[index]),
                directory: directory)
            started(server)
            servers.append(server)
        }
        for server in servers { try server.waitForJetStream() }
        return servers
    }

    /// The monitoring endpoint's JSON at `path` (e.g. `/connz?subs=1`), parsed.
    public func monitoring(_ path: String) throws -> [String: Any] {
        guard let monitorPort else { throw HarnessFailure("no monitoring port") }
        let body = try httpGet(port: monitorPort, path: path)
        guard let object = try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] else {
            throw HarnessFailure("\(path) is not a JSON object: \(body)")
        }
        return object
    }

    /// The subjects the client connection named `name` subscribes to on this server (from `/connz?subs=1`); nil when
    /// no connection of that name is here.
    public func subscriptions(ofConnectionNamed name: String) throws -> [String]? {
        let connections = try monitoring("/connz?subs=1")["connections"] as? [[String: Any]] ?? []
        guard let connection = connections.first(where: { $0["name"] as? String == name }) else { return nil }
        return connection["subscriptions_list"] as? [String] ?? []
    }
}
