import Foundation
import Glibc
import XCTest

/// `metrics_listen`: the real subd serving `GET /metrics`, read with `curl` and parsed with Python's
/// `prometheus_client` (Debian's python3-prometheus-client; `make deps-test` installs it and curl).
final class MetricsTests: IntegrationTestCase {
    /// A subd with metrics on `127.0.0.1:0` (and `extraLines`), and the port they are served on (from its
    /// `metrics on http://127.0.0.1:PORT/metrics` log line).
    private func startWithMetrics(
        _ config: DaemonConfig = DaemonConfig(), extraLines: [String] = []
    ) throws -> (Daemon, url: String) {
        var config = config
        config.extraLines += ["metrics_listen: 127.0.0.1:0"] + extraLines
        let daemon = try startDaemon(config)
        return (daemon, try metricsURL(daemon))
    }

    private func metricsURL(_ daemon: Daemon) throws -> String {
        try daemon.child.stderr.waitFor("'metrics on http://127.0.0.1:PORT/metrics'", timeout: 10) { text in
            text.firstMatch(of: /metrics on (http:\/\/127\.0\.0\.1:[0-9]+\/metrics)/).map { String($0.output.1) }
        }
    }

    private func port(of url: String) throws -> UInt16 {
        try XCTUnwrap(url.firstMatch(of: /:([0-9]+)\//).flatMap { UInt16($0.output.1) }, url)
    }

    // MARK: curl

    func testGetMetricsWithCurl() throws {
        let (_, url) = try startWithMetrics()
        let result = try Curl.get(url)
        XCTAssertEqual(result.status, 200, "\(result)")
        XCTAssertTrue(result.contentType.hasPrefix("text/plain; version=0.0.4"), "\(result)")
        XCTAssertTrue(result.body.contains("# TYPE subd_messages_published_total counter\n"), result.body)
        XCTAssertTrue(result.body.contains("\nsubd_connections 0\n"), result.body)
        XCTAssertNotNil(result.body.firstMatch(of: /\nprocess_resident_memory_bytes [1-9][0-9]+\n/), result.body)
    }

    func testOtherPathsAreNotFoundAndOtherMethodsNotAllowed() throws {
        let (_, url) = try startWithMetrics()
        let base = String(url.dropLast("/metrics".count))
        for path in ["/", "/metric", "/metrics/x", "/favicon.ico"] {
            let result = try Curl.get(base + path)
            XCTAssertEqual(result.status, 404, "\(path): \(result)")
            XCTAssertFalse(result.body.contains("subd_"), "\(path): \(result)")
        }
        XCTAssertEqual(try Curl.get(url, extra: ["-X", "POST"]).status, 405)
        let head = try Curl.get(url, extra: ["--head"])
        XCTAssertEqual(head.status, 200, "\(head)")
    }

    func testGarbageIsABadRequest() throws {
        let (_, url) = try startWithMetrics()
        let port = try port(of: url)
        let tlsHello = "\u{16}\u{3}\u{1}\u{2}\0\u{1}\0\u{1}\u{fc}\u{3}\u{3}\r\n"
        for garbage in ["garbage\r\n\r\n", "GET /metrics HTTP/1.1\r\n\r\n", tlsHello] {
            let exchange = try RawHTTP.exchange(port: port, send: Array(garbage.utf8))
            XCTAssertTrue(
                exchange.response.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(garbage.debugDescription): \(exchange)")
            // Not at the 5 s read deadline (which a slow client meets after more than 4.5 s), with room for load.
            XCTAssertLessThan(exchange.seconds, 4, "a bad request line is answered at once")
        }
        let tooLarge = "GET /metrics HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "x", count: 9000) + "\r\n\r\n"
        let exchange = try RawHTTP.exchange(port: port, send: Array(tooLarge.utf8))
        XCTAssertTrue(exchange.response.hasPrefix("HTTP/1.1 431 "), "\(exchange)")
    }

    /// A client that sends half a request line and waits is told 408 and closed 5 s after it connected, and the
    /// endpoint serves others meanwhile.
    func testASlowClientIsClosedAfterFiveSeconds() throws {
        let (_, url) = try startWithMetrics()
        let port = try port(of: url)
        let slow = Thread.runOnNewThread {
            try RawHTTP.exchange(port: port, send: Array("GET /metr".utf8), timeout: 15)
        }
        usleep(500_000)
        let meanwhile = try Curl.get(url)
        XCTAssertEqual(meanwhile.status, 200, "a slow client does not hold up another: \(meanwhile)")
        let exchange = try slow.get()
        XCTAssertTrue(exchange.response.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"), "\(exchange)")
        XCTAssertGreaterThan(exchange.seconds, 4.5, "\(exchange)")
        XCTAssertLessThan(exchange.seconds, 10, "\(exchange)")
    }

    /// At most 64 metrics connections are open at once: the next is answered 503 and closed, and once they are gone
    /// the endpoint serves again.
    func testConnectionLimit() throws {
        let (_, url) = try startWithMetrics()
        let port = try port(of: url)
        var idle: [Int32] = []
        defer { for fd in idle { close(fd) } }
        for _ in 0..<64 { idle.append(try RawHTTP.connect(port: port)) }
        let refused = try Curl.get(url)
        XCTAssertEqual(refused.status, 503, "\(refused)")
        for fd in idle { close(fd) }
        idle.removeAll()
        try eventually("the endpoint serves again once the idle connections closed") { try Curl.get(url).status == 200 }
    }

    // MARK: Parsed with prometheus_client

    /// Counters move after some PUBs, and the busiest numbers (most messages published, `metrics_top_numbers` of
    /// them) appear with their counts and subscribers; a removed number leaves the list.
    func testCountersMoveAndTheBusiestNumbersAppear() throws {
        let (daemon, url) = try startWithMetrics(extraLines: ["metrics_top_numbers: 3"])
        let before = try Prometheus.scrape(url)
        XCTAssertEqual(before.value("subd_messages_published_total"), 0)
        XCTAssertEqual(before.samples("subd_number_messages_published_total").count, 0)

        let publisher = try connect(daemon, "publisher")
        let subscriber = try connect(daemon, "subscriber")
        try create(publisher, "N0", "N1", "N2", "N3", "N\"4\\")
        try subscribe(subscriber, "N1")
        let plan: [(String, Int)] = [("N0", 5), ("N1", 4), ("N2", 3), ("N3", 2), ("N\"4\\", 1)]
        for (number, times) in plan {
            for index in 0..<times { XCTAssertEqual(try publisher.command("SEND \(number) m\(index)").errorCode, nil) }
        }
        XCTAssertEqual(try publisher.command("QUIT"), .ok("bye"))
        publisher.close()

        try eventually("the publisher's close is counted") {
            try Prometheus.scrape(url).value("subd_closed_connections_total", ["reason": "client"]) == 1
        }
        let after = try Prometheus.scrape(url)
        XCTAssertEqual(after.value("subd_messages_published_total"), 15)
        XCTAssertEqual(after.value("subd_messages_delivered_total"), 4)
        XCTAssertEqual(after.value("subd_numbers"), 5)
        XCTAssertEqual(after.value("subd_subscriptions"), 1)
        XCTAssertEqual(after.value("subd_connections"), 1)
        XCTAssertEqual(after.value("subd_accepted_connections_total"), 2)
        XCTAssertGreaterThan(
            after.value("subd_received_bytes_total") ?? 0, before.value("subd_received_bytes_total") ?? 0)
        XCTAssertEqual(after.value("subd_protocol_errors_total"), 0)
        XCTAssertEqual(after.type("subd_messages_published"), "counter")
        XCTAssertEqual(after.type("subd_connections"), "gauge")
        XCTAssertGreaterThan(after.value("process_resident_memory_bytes") ?? 0, 1_000_000)
        XCTAssertGreaterThan(after.value("process_open_fds") ?? 0, 3)

        XCTAssertEqual(
            after.samples("subd_number_messages_published_total").sorted { $0.value > $1.value }.map(\.labels),
            [["number": "N0"], ["number": "N1"], ["number": "N2"]])
        XCTAssertEqual(after.value("subd_number_messages_published_total", ["number": "N0"]), 5)
        XCTAssertEqual(after.value("subd_number_messages_published_total", ["number": "N1"]), 4)
        XCTAssertEqual(after.value("subd_number_messages_published_total", ["number": "N2"]), 3)
        XCTAssertEqual(after.value("subd_number_subscribers", ["number": "N1"]), 1)
        XCTAssertEqual(after.value("subd_number_subscribers", ["number": "N0"]), 0)

        // A removed number is forgotten: the next busiest takes its place.
        XCTAssertEqual(try subscriber.command("REMOVE N0"), .ok("removed 0"))
        let removed = try Prometheus.scrape(url)
        XCTAssertEqual(
            Set(removed.samples("subd_number_messages_published_total").map { $0.labels["number"] ?? "" }),
            ["N1", "N2", "N3"])

        // Label values are escaped: a number with a quote and a backslash comes back as it was.
        for _ in 0..<10 { XCTAssertEqual(try subscriber.command("SEND N\"4\\ x").errorCode, nil) }
        let escaped = try Prometheus.scrape(url)
        XCTAssertEqual(escaped.value("subd_number_messages_published_total", ["number": "N\"4\\"]), 11)
    }

    // MARK: Configuration

    func testMetricsAreOffByDefault() throws {
        let daemon = try startDaemon()
        XCTAssertFalse(daemon.log.contains("metrics on"), daemon.log)
    }

    func testTheEnvironmentVariableTurnsThemOn() throws {
        let daemon = try startDaemon(environment: ["SUBD_METRICS_LISTEN": "127.0.0.1:0"])
        XCTAssertEqual(try Curl.get(try metricsURL(daemon)).status, 200)
    }

    func testABadAddressIsAConfigurationError() throws {
        let executable = try BinaryLocator.executable("subd")
        let child = try ChildProcess(
            executable: executable, arguments: ["--listen", "127.0.0.1:0"],
            environment: Daemon.environment(["SUBD_METRICS_LISTEN": "127.0.0.1"]), label: "subd")
        defer { child.kill9IfRunning() }
        XCTAssertEqual(child.waitForExit(timeout: 10), 78)
        assertOutput(child.stderr, contains: "metrics_listen: '127.0.0.1' has no port")
    }

    /// A metrics address that cannot be bound stops subd at start with a line that names the key.
    func testAnAddressInUseStopsTheStart() throws {
        let (_, url) = try startWithMetrics()
        let taken = "127.0.0.1:\(try port(of: url))"
        let child = try ChildProcess(
            executable: try BinaryLocator.executable("subd"), arguments: ["--listen", "127.0.0.1:0"],
            environment: Daemon.environment(["SUBD_METRICS_LISTEN": taken]), label: "subd")
        defer { child.kill9IfRunning() }
        XCTAssertEqual(child.waitForExit(timeout: 10), 1)
        XCTAssertTrue(
            child.stderr.text.contains("cannot start: metrics_listen: bind \(taken): Address already in use"),
            child.stderr.text)
    }

    /// A reload that changes `metrics_listen` says that takes a restart; the endpoint stays where it was.
    func testAReloadThatMovesTheEndpointTakesARestart() throws {
        let (daemon, url) = try startWithMetrics()
        var reloaded = DaemonConfig()
        reloaded.extraLines = ["metrics_listen: 127.0.0.1:1"]
        try reloaded.yaml.write(to: daemon.configFile, atomically: true, encoding: .utf8)
        daemon.child.send(signal: SIGHUP)
        let warning = "reload: metrics_listen changed; the listeners stay as they are until subd restarts"
        try daemon.child.stderr.waitFor(substring: warning, timeout: 10)
        try daemon.child.stderr.waitFor(substring: "configuration reloaded", timeout: 10)
        XCTAssertEqual(try Curl.get(url).status, 200)
    }
}

// MARK: Tools

/// `curl`, as a person would run it.
private enum Curl {
    /// What one request got.
    struct Result: CustomStringConvertible {
        var status: Int
        var contentType: String
        var body: String
        var description: String { "HTTP \(status) (\(contentType))\n\(body)" }
    }

    /// `curl -sS URL` (plus `extra`), with the status and content type written after the body.
    static func get(_ url: String, extra: [String] = []) throws -> Result {
        let curl = try Tools.find("curl", hint: "`make deps-test` installs it (Debian's curl)")
        let marker = "\n--curl-says--"
        let child = try ChildProcess(
            executable: curl,
            arguments: ["-sS", "--max-time", "10", "-w", "\(marker)%{http_code} %{content_type}"] + extra + [url],
            label: "curl")
        guard let status = child.waitForExit(timeout: 15) else {
            child.kill9IfRunning()
            throw HarnessError.timeout("curl \(url) did not finish in 15 s")
        }
        child.stdout.waitForEnd(timeout: 5)
        let output = child.stdout.text
        guard status == 0, let range = output.range(of: marker, options: .backwards) else {
            throw HarnessError.process("curl \(url) exited \(status): \(child.stderr.text) \(output)")
        }
        let trailer = output[range.upperBound...].split(separator: " ", maxSplits: 1)
        return Result(
            status: Int(trailer.first ?? "") ?? 0, contentType: trailer.count > 1 ? String(trailer[1]) : "",
            body: String(output[..<range.lowerBound]))
    }
}

/// The metrics as Python's `prometheus_client.parser.text_string_to_metric_families` reads them.
private struct Prometheus {
    /// One sample: its name, labels and value.
    struct Sample: Decodable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    /// One family, as the parser names it (a counter without its `_total`).
    struct Family: Decodable {
        var type: String
        var samples: [Sample]
    }

    var families: [String: Family]

    /// GETs `url` with curl and parses the body with prometheus_client (which fails on text it cannot read).
    static func scrape(_ url: String) throws -> Prometheus {
        let result = try Curl.get(url)
        guard result.status == 200 else { throw HarnessError.process("GET \(url): \(result)") }
        let python = try ExternalTool.python(
            importing: "prometheus_client.parser", package: "python3-prometheus-client")
        let script = """
            import json, sys
            from prometheus_client.parser import text_string_to_metric_families
            families = {}
            for family in text_string_to_metric_families(sys.stdin.read()):
                families[family.name] = {"type": family.type, "samples": [
                    {"name": s.name, "labels": s.labels, "value": s.value} for s in family.samples]}
            print(json.dumps(families))
            """
        let child = try ChildProcess(executable: python, arguments: ["-c", script], stdinPipe: true, label: "python3")
        try child.writeStdinAndClose(Array(result.body.utf8))
        guard child.waitForExit(timeout: 20) == 0 else {
            child.kill9IfRunning()
            throw HarnessError.process(
                "prometheus_client could not parse the metrics: \(child.stderr.text)\n\(result.body)")
        }
        child.stdout.waitForEnd(timeout: 5)
        return Prometheus(families: try JSONDecoder().decode([String: Family].self, from: Data(child.stdout.allBytes)))
    }

    /// Every sample named `name`, whatever its family.
    func samples(_ name: String) -> [Sample] {
        families.values.flatMap(\.samples).filter { $0.name == name }
    }

    /// The value of the sample `name` with exactly `labels`.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples(name).first { $0.labels == labels }?.value
    }

    /// The type of the family `name`.
    func type(_ name: String) -> String? { families[name]?.type }
}

/// A raw TCP client for what curl will not send.
private enum RawHTTP {
    /// What came back, and when the server closed.
    struct Exchange: CustomStringConvertible {
        var response: String
        var seconds: Double
        var description: String { "after \(seconds) s: \(response.debugDescription)" }
    }

    /// A connected socket to `127.0.0.1:port`.
    static func connect(port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HarnessError.system("socket", errno) }
        var address = TestAddress.loopback(port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            throw HarnessError.system("connect to 127.0.0.1:\(port)", errno)
        }
        return fd
    }

    /// Sends `bytes`, then reads until the server closes (at most `timeout` seconds).
    static func exchange(port: UInt16, send bytes: [UInt8], timeout: Double = 10) throws -> Exchange {
        let fd = try connect(port: port)
        defer { close(fd) }
        let started = Date()
        var value = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        guard bytes.withUnsafeBytes({ Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count
        else { throw HarnessError.system("send", errno) }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                received += chunk[..<count]
                continue
            }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                throw HarnessError.timeout("the server did not close within \(timeout) s: \(describeBytes(received))")
            }
            break  // EOF, or a reset after the response
        }
        return Exchange(response: String(decoding: received, as: UTF8.self), seconds: Date().timeIntervalSince(started))
    }
}

/// Finds the tools the metrics tests run.
private enum Tools {
    /// `name` in /usr/bin, /bin or PATH.
    static func find(_ name: String, hint: String) throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in ["/usr/bin", "/bin"] + path.split(separator: ":").map(String.init) {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        throw HarnessError.missingBinary("\(name) not found in /usr/bin, /bin or PATH; \(hint)")
    }
}

extension Thread {
    /// Runs `body` on a new thread; `get()` on what it returns waits for its result.
    fileprivate static func runOnNewThread<T: Sendable>(
        _ body: @escaping @Sendable () throws -> T
    ) -> Pending<T> {
        let pending = Pending<T>()
        Thread.detachNewThread { pending.finish(Result { try body() }) }
        return pending
    }
}

/// The result of work on another thread.
private final class Pending<T: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<T, any Error>?

    func finish(_ result: Result<T, any Error>) {
        self.result = result
        done.signal()
    }

    func get() throws -> T {
        done.wait()
        return try result!.get()
    }
}
