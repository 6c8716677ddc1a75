import Foundation
import Glibc
import XCTest

/// Base class of the integration tests: starts real `subd` processes and connects raw clients, and cleans up after
/// each test (clients closed, listeners stopped, each subd stopped with SIGTERM and asserted to exit 0 in 10 s).
class IntegrationTestCase: XCTestCase {
    private var daemons: [Daemon] = []
    private var clients: [LineClient] = []
    private var listeners: [Listener] = []

    override func setUp() {
        super.setUp()
        // A write to the stdin pipe of a subctl that already exited must fail, not kill the test process.
        signal(SIGPIPE, SIG_IGN)
        continueAfterFailure = true
    }

    override func tearDown() {
        for listener in listeners { listener.child.kill9IfRunning() }
        listeners.removeAll()
        for client in clients { client.close() }
        clients.removeAll()
        for daemon in daemons {
            let status = daemon.stop()
            XCTAssertEqual(status, 0, "subd did not exit 0 within 10 s of SIGTERM; its log:\n\(daemon.log)")
        }
        daemons.removeAll()
        super.tearDown()
    }

    /// Starts a subd with `config` (and a Unix socket when asked); stopped and checked at teardown.
    func startDaemon(
        _ config: DaemonConfig = DaemonConfig(), unixSocket: Bool = false, extraArguments: [String] = [],
        environment: [String: String?] = [:], shellPrefix: String? = nil
    ) throws -> Daemon {
        let daemon = try Daemon(
            config: config, unixSocket: unixSocket, extraArguments: extraArguments, environment: environment,
            shellPrefix: shellPrefix)
        daemons.append(daemon)
        return daemon
    }

    /// `subd hash-secret` of `secret`: the `secret_hash` of a user in the config.
    func hashSecret(_ secret: String) throws -> String {
        let child = try ChildProcess(
            executable: try BinaryLocator.executable("subd"), arguments: ["hash-secret"], stdinPipe: true,
            label: "subd hash-secret")
        try child.writeStdinAndClose(Array((secret + "\n").utf8))
        XCTAssertEqual(child.waitForExit(timeout: 10), 0, child.stderr.text)
        child.stdout.waitForEnd(timeout: 5)
        return child.stdout.text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A process's resident memory in bytes (VmRSS from /proc).
    func residentBytes(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return try XCTUnwrap(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])) * 1024
    }

    /// How many descriptors a process has open (the entries of /proc/PID/fd).
    func openDescriptorCount(of pid: Int32) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
    }

    /// Opens a raw TCP client to `daemon`; closed at teardown.
    func connect(
        _ daemon: Daemon, _ label: String = "client", timeout: TimeInterval = 5, receiveBuffer: Int32? = nil
    ) throws -> LineClient {
        let client = try LineClient.connect(
            port: daemon.port, label: label, timeout: timeout, receiveBuffer: receiveBuffer)
        clients.append(client)
        return client
    }

    /// Opens a raw client on `daemon`'s Unix socket; closed at teardown.
    func connectUnix(_ daemon: Daemon, _ label: String = "unix client") throws -> LineClient {
        let path = try XCTUnwrap(daemon.unixPath, "daemon was started without --unix")
        let client = try LineClient.connect(unixPath: path, label: label)
        clients.append(client)
        return client
    }

    /// Starts `subctl listen` on `daemon`; killed at teardown if still running.
    func listen(_ daemon: Daemon, _ arguments: [String], extra: [String] = []) throws -> Listener {
        let listener = try Subctl.listen(server: daemon.server, arguments, extra: extra)
        listeners.append(listener)
        return listener
    }

    /// Starts `subctl watch` on `daemon`; killed at teardown if still running.
    func watch(_ daemon: Daemon, _ arguments: [String]) throws -> Listener {
        let watcher = try Subctl.watch(server: daemon.server, arguments)
        listeners.append(watcher)
        return watcher
    }

    /// Runs `subctl SUBCOMMAND --server DAEMON rest...`.
    func subctl(
        _ daemon: Daemon, _ subcommand: String, _ rest: [String] = [], stdin: [UInt8]? = nil
    ) throws -> SubctlResult {
        try Subctl.run([subcommand, "--server", daemon.server] + rest, stdin: stdin)
    }

    /// Sends `CREATE` for each number and asserts `+OK created`.
    func create(_ client: LineClient, _ numbers: String..., file: StaticString = #filePath, line: UInt = #line) throws {
        for number in numbers {
            XCTAssertEqual(
                try client.command("CREATE \(number)"), .ok("created"), "CREATE \(number)",
                file: file, line: line)
        }
    }

    /// Sends `SUB` for each pattern and asserts `+OK`.
    func subscribe(_ client: LineClient, _ patterns: String..., file: StaticString = #filePath, line: UInt = #line)
        throws
    {
        for pattern in patterns {
            XCTAssertEqual(try client.command("SUB \(pattern)"), .ok(), "SUB \(pattern)", file: file, line: line)
        }
    }

    /// Asserts that `reply` is `-ERR <code> <some text>`.
    func assertError(
        _ reply: Reply, _ code: String, _ context: String = "", file: StaticString = #filePath, line: UInt = #line
    ) {
        guard case .error(let got, let message) = reply else {
            XCTFail("\(context): expected -ERR \(code), got \(reply)", file: file, line: line)
            return
        }
        XCTAssertEqual(got, code, "\(context): error code (message: \(message))", file: file, line: line)
        XCTAssertFalse(
            message.isEmpty, "\(context): -ERR \(code) without a human-readable text", file: file, line: line)
    }

    /// Asserts that the connection still answers PING.
    func assertOpen(_ client: LineClient, _ context: String = "", file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(
            try client.command("PING"), .status("PONG"), "\(context): connection should stay open",
            file: file, line: line)
    }

    /// Polls `condition` (a few ms apart) until it is true; fails after `timeout` seconds. Only for state the
    /// server changes asynchronously where no reply can be awaited (e.g. it noticing a closed socket).
    func eventually(
        _ what: String, timeout: TimeInterval = 5, file: StaticString = #filePath, line: UInt = #line,
        _ condition: () throws -> Bool
    ) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            if try condition() { return }
            if Date() > deadline {
                XCTFail("not within \(timeout) s: \(what)", file: file, line: line)
                return
            }
            usleep(5_000)
        }
    }

    /// The `<number> <subscribers>` lines of `LIST [pattern]` as a dictionary, failing on a malformed line.
    func listCounts(_ client: LineClient, _ pattern: String? = nil, file: StaticString = #filePath, line: UInt = #line)
        throws -> [String: Int]
    {
        let reply = try client.command(pattern.map { "LIST \($0)" } ?? "LIST")
        guard case .list(let lines) = reply else {
            XCTFail("LIST: expected *n, got \(reply)", file: file, line: line)
            return [:]
        }
        var counts: [String: Int] = [:]
        for entry in lines {
            let parts = entry.split(separator: " ", omittingEmptySubsequences: false)
            guard parts.count == 2, let count = Int(parts[1]) else {
                XCTFail("LIST line not '<number> <subscribers>': \(entry)", file: file, line: line)
                continue
            }
            counts[String(parts[0])] = count
        }
        return counts
    }

    /// The counter `key` of a `stats(_:)` result as a number; fails (and returns nil) when STATS has no such key or
    /// its value is not a whole number.
    func counter(
        _ values: [String: String], _ key: String, file: StaticString = #filePath, line: UInt = #line
    ) -> Int? {
        guard let text = values[key] else {
            XCTFail(
                "STATS has no key '\(key)' (keys: \(values.keys.sorted().joined(separator: " ")))",
                file: file, line: line)
            return nil
        }
        guard let value = Int(text) else {
            XCTFail("STATS \(key) is not a whole number: '\(text)'", file: file, line: line)
            return nil
        }
        return value
    }

    /// Asserts that the STATS counter `key` grew by exactly `expected` from `before` to `after` (two `stats(_:)`
    /// results); fails when either lacks the key.
    func assertCounter(
        _ key: String, grewBy expected: Int, from before: [String: String], to after: [String: String],
        _ context: String = "", file: StaticString = #filePath, line: UInt = #line
    ) {
        guard let old = counter(before, key, file: file, line: line),
            let new = counter(after, key, file: file, line: line)
        else { return }
        XCTAssertEqual(
            new - old, expected, "\(context): STATS \(key) went from \(old) to \(new)", file: file, line: line)
    }

    /// `STATS` as a dictionary of key to value text.
    func stats(_ client: LineClient, file: StaticString = #filePath, line: UInt = #line) throws -> [String: String] {
        let reply = try client.command("STATS")
        guard case .list(let lines) = reply else {
            XCTFail("STATS: expected *n, got \(reply)", file: file, line: line)
            return [:]
        }
        var values: [String: String] = [:]
        for entry in lines {
            let parts = entry.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty else {
                XCTFail("STATS line not '<key> <value>': \(entry)", file: file, line: line)
                continue
            }
            values[String(parts[0])] = String(parts[1])
        }
        return values
    }
}

extension XCTestCase {
    /// Asserts that `output` (a child's stderr, e.g. `daemon.child.stderr`) shows `text` within `timeout` seconds. A
    /// thread of ours reads the child's pipe, so a line the child wrote just before a reply (or before it exited)
    /// may not have been read yet when the reply (or the exit) is seen.
    func assertOutput(
        _ output: OutputCollector, contains text: String, timeout: TimeInterval = 5,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        do {
            try output.waitFor(substring: text, timeout: timeout)
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
    }
}
