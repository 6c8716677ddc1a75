import Foundation
import Glibc

/// What one finished `subctl` run printed and how it exited.
struct SubctlResult: CustomStringConvertible {
    /// The arguments it was run with.
    var arguments: [String]
    /// Exactly the bytes written to stdout.
    var stdout: [UInt8]
    /// stderr as text.
    var stderr: String
    /// The exit status (128 + signal when killed by one).
    var status: Int32

    /// stdout as text.
    var output: String { String(decoding: stdout, as: UTF8.self) }
    /// stdout split into lines (the final LF does not make an empty last line).
    var lines: [String] { lines(of: output) }
    /// stderr split into lines.
    var errorLines: [String] { lines(of: stderr) }

    private func lines(of text: String) -> [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    var description: String {
        "subctl \(arguments.joined(separator: " ")) → exit \(status)\nstdout: \(describeBytes(stdout, limit: 2000))"
            + "\nstderr: \(stderr)"
    }
}

/// Runs the real `subctl` binary.
enum Subctl {
    /// Runs `subctl arguments...` to completion (at most `timeout` seconds, then it is killed and this throws),
    /// feeding `stdin` when given. `SUBD_SERVER` is removed from the environment unless `environment` sets it.
    static func run(
        _ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String?] = [:],
        timeout: TimeInterval = 10
    ) throws -> SubctlResult {
        var env: [String: String?] = ["SUBD_SERVER": nil]
        for (key, value) in environment { env[key] = value }
        let child = try ChildProcess(
            executable: try BinaryLocator.executable("subctl"), arguments: arguments, environment: env,
            stdinPipe: stdin != nil, label: "subctl \(arguments.first ?? "")")
        if let stdin { try child.writeStdinAndClose(stdin) }
        guard let status = child.waitForExit(timeout: timeout) else {
            child.kill9IfRunning()
            throw HarnessError.timeout(
                "subctl \(arguments.joined(separator: " ")) did not exit within \(timeout) s; stdout: "
                    + "\(child.stdout.text) stderr: \(child.stderr.text)")
        }
        child.stdout.waitForEnd(timeout: 5)
        child.stderr.waitForEnd(timeout: 5)
        return SubctlResult(
            arguments: arguments, stdout: child.stdout.allBytes, stderr: child.stderr.text, status: status)
    }

    /// Starts `subctl listen --server SERVER arguments...` in the background and waits (10 s at most) until it
    /// wrote `subctl: listening on` to stderr, i.e. until every SUB got `+OK`.
    static func listen(server: String, _ arguments: [String], extra: [String] = []) throws -> Listener {
        try background(["listen", "--server", server] + extra + arguments, ready: "subctl: listening on")
    }

    /// Starts `subctl watch --server SERVER arguments...` in the background and waits (10 s at most) until it wrote
    /// `subctl: watching` to stderr, i.e. until it is subscribed and knows the number is retained.
    static func watch(server: String, _ arguments: [String]) throws -> Listener {
        try background(["watch", "--server", server] + arguments, ready: "subctl: watching")
    }

    /// Starts `subctl all...` and waits (10 s at most) until it wrote `ready` to stderr.
    private static func background(_ all: [String], ready: String) throws -> Listener {
        let child = try ChildProcess(
            executable: try BinaryLocator.executable("subctl"), arguments: all, environment: ["SUBD_SERVER": nil],
            label: "subctl \(all[0])")
        let listener = Listener(child: child, arguments: all)
        do {
            try child.stderr.waitFor(substring: ready, timeout: 10)
        } catch {
            child.kill9IfRunning()
            throw error
        }
        return listener
    }
}

/// A running `subctl listen` (or `subctl watch`) whose stdout is read line by line.
final class Listener: @unchecked Sendable {
    /// The subctl process.
    let child: ChildProcess
    /// The arguments it was started with.
    let arguments: [String]

    init(child: ChildProcess, arguments: [String]) {
        self.child = child
        self.arguments = arguments
    }

    /// The next line it printed to stdout (payload bytes without the LF it added).
    func readLine(timeout: TimeInterval = 5) throws -> [UInt8] { try child.stdout.readLine(timeout: timeout) }

    /// The next stdout line as text.
    func readTextLine(timeout: TimeInterval = 5) throws -> String {
        String(decoding: try readLine(timeout: timeout), as: UTF8.self)
    }

    /// Exactly the next `count` bytes of stdout.
    func readBytes(_ count: Int, timeout: TimeInterval = 5) throws -> [UInt8] {
        try child.stdout.readBytes(count, timeout: timeout)
    }

    /// Everything on stderr so far.
    var stderr: String { child.stderr.text }

    /// Waits for it to exit by itself; the exit status, nil on timeout.
    func waitForExit(timeout: TimeInterval = 10) -> Int32? { child.waitForExit(timeout: timeout) }

    /// Sends SIGTERM and returns the exit status (nil when it did not exit within 10 s; it is then killed).
    func stop() -> Int32? {
        child.send(signal: SIGTERM)
        let status = child.waitForExit(timeout: 10)
        if status == nil { child.kill9IfRunning() }
        return status
    }
}
