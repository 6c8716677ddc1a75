import Foundation
import Glibc

/// A real `subd` started as a child process on `127.0.0.1:0` (and optionally a Unix socket) with a temporary
/// YAML config. `start` returns once subd logged the port it listens on; `stop` sends SIGTERM and returns the exit
/// status.
final class Daemon: @unchecked Sendable {
    /// The running subd.
    let child: ChildProcess
    /// The TCP port subd bound (parsed from its `listening on tcp 127.0.0.1:PORT` log line).
    let port: UInt16
    /// The Unix socket path subd serves, when started with one.
    let unixPath: String?
    /// The temporary directory holding the config file (and the Unix socket); removed by `stop`.
    let directory: URL
    /// The YAML file subd reads (at start and on SIGHUP).
    var configFile: URL { directory.appendingPathComponent("subd.yaml") }
    private var stopped = false

    /// `--server` value for subctl: `127.0.0.1:PORT`.
    var server: String { "127.0.0.1:\(port)" }

    /// The environment changes for a subd child: `given`, and every variable through which systemd talks to a
    /// service removed unless `given` sets it (a test run under systemd must not make every subd notify it).
    static func environment(_ given: [String: String?] = [:]) -> [String: String?] {
        var changes: [String: String?] = [:]
        for name in [
            "NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES",
            "JOURNAL_STREAM",
        ] {
            changes[name] = .some(nil)
        }
        return changes.merging(given) { _, set in set }
    }

    /// Writes `config` to a temporary file and starts subd with `--config FILE --listen 127.0.0.1:0`
    /// (plus `--unix PATH` when `unixSocket` is true); waits up to 10 s for the listening lines.
    /// `shellPrefix`, when given, is shell code run by `/bin/sh` just before it execs subd (same process), e.g. to
    /// export a variable computed from the process's own descriptors.
    init(
        config: DaemonConfig = DaemonConfig(), unixSocket: Bool = false, extraArguments: [String] = [],
        environment: [String: String?] = [:], shellPrefix: String? = nil
    ) throws {
        let executable = try BinaryLocator.executable("subd")
        // Short path: sun_path holds at most 107 bytes.
        directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("subd-it-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let configFile = directory.appendingPathComponent("subd.yaml")
        try config.yaml.write(to: configFile, atomically: true, encoding: .utf8)
        var arguments = ["--config", configFile.path, "--listen", "127.0.0.1:0"]
        let unixPath = unixSocket ? directory.appendingPathComponent("subd.sock").path : nil
        if let unixPath { arguments += ["--unix", unixPath] }
        arguments += extraArguments
        self.unixPath = unixPath
        let childEnvironment = Self.environment(environment)
        if let shellPrefix {
            child = try ChildProcess(
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", "\(shellPrefix)\nexec \"$0\" \"$@\"", executable.path] + arguments,
                environment: childEnvironment, label: "subd"
            )
        } else {
            child = try ChildProcess(
                executable: executable, arguments: arguments, environment: childEnvironment, label: "subd")
        }
        do {
            let portText = try child.stderr.waitFor("'listening on tcp 127.0.0.1:PORT'", timeout: 10) { text in
                text.firstMatch(of: /listening on tcp ([0-9.]+):([0-9]+)/).map { String($0.output.2) }
            }
            guard let port = UInt16(portText), port != 0 else {
                throw HarnessError.process("subd logged an invalid port '\(portText)':\n\(child.stderr.text)")
            }
            self.port = port
            if let unixPath {
                try child.stderr.waitFor(substring: "listening on unix \(unixPath)", timeout: 10)
            }
        } catch {
            child.kill9IfRunning()
            let status = child.waitForExit(timeout: 0).map { "exit status \($0)" } ?? "still running"
            throw HarnessError.process("subd \(arguments.joined(separator: " ")) did not start (\(status)): \(error)")
        }
    }

    /// Sends `signal` (SIGTERM by default; nil sends none, for a signal already sent) and waits up to `timeout`
    /// seconds for subd to exit; returns its exit status, or nil when it did not exit in time (it is then killed).
    func stop(signal: Int32? = SIGTERM, timeout: TimeInterval = 10) -> Int32? {
        guard !stopped else { return child.waitForExit(timeout: 0) }
        stopped = true
        if let signal { child.send(signal: signal) }
        let status = child.waitForExit(timeout: timeout)
        if status == nil { child.kill9IfRunning() }
        try? FileManager.default.removeItem(at: directory)
        return status
    }

    /// The port of the `kind` listener (`tls`, `ws`, `wss`), parsed from its `listening on KIND 127.0.0.1:PORT` log
    /// line (waited for up to 10 s).
    func listenerPort(_ kind: String) throws -> UInt16 {
        let line = try Regex("listening on \(kind) [0-9.]+:([0-9]+)")
        let text = try child.stderr.waitFor("'listening on \(kind) 127.0.0.1:PORT'", timeout: 10) { text in
            text.firstMatch(of: line)?.output[1].substring.map(String.init)
        }
        guard let port = UInt16(text), port != 0 else { throw HarnessError.malformed("\(kind) port '\(text)'") }
        return port
    }

    /// The port of the WebSocket listener (`wss` when `secure`), parsed from its `listening on ws
    /// 127.0.0.1:PORT/PATH` log line.
    func webSocketPort(secure: Bool = false) throws -> UInt16 { try listenerPort(secure ? "wss" : "ws") }

    /// Everything subd wrote to stderr so far (its log).
    var log: String { child.stderr.text }

    /// How long its drain took by the timestamps of its log, from `signal SIGTERM: draining connections` to
    /// `stopped` (a loaded machine's delays in the test process and in subd's exit do not count); nil when either line
    /// is missing.
    var drainSeconds: TimeInterval? {
        let lines = log.split(separator: "\n")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        func stamp(_ ending: String) -> Date? {
            guard let line = lines.first(where: { $0.hasSuffix(ending) }), let first = line.split(separator: " ").first
            else { return nil }
            return formatter.date(from: String(first))
        }
        guard let began = stamp(": draining connections"), let ended = stamp(" info stopped") else { return nil }
        return ended.timeIntervalSince(began)
    }
}
