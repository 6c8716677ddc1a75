import Foundation
import Glibc
import XCTest

/// A child process with its stdout and stderr drained by `OutputCollector`s and an optional stdin pipe.
final class ChildProcess: @unchecked Sendable {
    /// The underlying Foundation process.
    let process = Process()
    /// What the child writes to stdout.
    let stdout: OutputCollector
    /// What the child writes to stderr.
    let stderr: OutputCollector
    /// The write end of the child's stdin, when it was started with `stdinPipe: true`.
    let stdin: FileHandle?
    /// A short name for failure messages, e.g. `subd` or `subctl listen`.
    let label: String
    private let exited = DispatchSemaphore(value: 0)

    /// Starts `executable` with `arguments`; `environment` entries are added to (or, when nil, removed from) ours.
    init(
        executable: URL, arguments: [String], environment: [String: String?] = [:], stdinPipe: Bool = false,
        label: String
    ) throws {
        self.label = label
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let outPipe = Pipe()
        let errPipe = Pipe()
        process.standardOutput = outPipe
        process.standardError = errPipe
        if stdinPipe {
            let inPipe = Pipe()
            process.standardInput = inPipe
            stdin = inPipe.fileHandleForWriting
        } else {
            process.standardInput = FileHandle.nullDevice
            stdin = nil
        }
        let exited = self.exited
        process.terminationHandler = { _ in exited.signal() }
        do {
            try process.run()
        } catch {
            throw HarnessError.process("cannot start \(executable.path): \(error)")
        }
        stdout = OutputCollector(fileHandle: outPipe.fileHandleForReading, label: "\(label) stdout")
        stderr = OutputCollector(fileHandle: errPipe.fileHandleForReading, label: "\(label) stderr")
    }

    /// The child's process id.
    var pid: Int32 { process.processIdentifier }

    /// Sends `signal` (e.g. SIGTERM) to the child.
    func send(signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Sends SIGSTOP and waits (up to 5 s) until every thread of the child is stopped: kill(2) returns before a
    /// thread running on another core has stopped, and until then it may still answer.
    func stop(file: StaticString = #filePath, line: UInt = #line) {
        Self.stop(pid: pid, file: file, line: line)
    }

    /// ``stop(file:line:)`` for any process of ours, e.g. a subd started by a cluster test.
    static func stop(pid: Int32, file: StaticString = #filePath, line: UInt = #line) {
        guard kill(pid, SIGSTOP) == 0 else {
            return XCTFail("SIGSTOP to \(pid): errno \(errno)", file: file, line: line)
        }
        let deadline = Date(timeIntervalSinceNow: 5)
        while Date() < deadline {
            if allThreadsStopped(pid) { return }
            usleep(1_000)
        }
        XCTFail("process \(pid) not stopped within 5 s of SIGSTOP", file: file, line: line)
    }

    /// True when every thread of `pid` is in state T (stopped) in /proc.
    private static func allThreadsStopped(_ pid: Int32) -> Bool {
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task"),
            !threads.isEmpty
        else { return false }
        return threads.allSatisfy { thread in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return false }
            // `PID (COMMAND) STATE ...`: the command may hold spaces and parentheses, the state follows the last ')'.
            return stat[stat.index(after: close)...].dropFirst().first == "T"
        }
    }

    /// Writes `bytes` to the child's stdin and closes it. A child that exits (or closes its stdin) before reading
    /// them all, e.g. on a usage error, is no error here: the write then fails with EPIPE, and what the child did is
    /// in its exit status and output.
    func writeStdinAndClose(_ bytes: [UInt8]) throws {
        guard let stdin else { throw HarnessError.process("\(label) was started without a stdin pipe") }
        do {
            try stdin.write(contentsOf: Data(bytes))
        } catch let error as NSError where Self.isBrokenPipe(error) {
            try? stdin.close()
            return
        }
        try stdin.close()
    }

    /// True for EPIPE, also when Foundation wraps it (`NSUnderlyingErrorKey`).
    private static func isBrokenPipe(_ error: NSError) -> Bool {
        if error.domain == NSPOSIXErrorDomain && error.code == Int(EPIPE) { return true }
        guard let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError else { return false }
        return isBrokenPipe(underlying)
    }

    /// Waits for the child to exit; returns its exit status (or 128 + signal when killed), nil on timeout. Once it
    /// exited, also waits (2 s at most) until its stdout and stderr are read to their end, so `text` holds all it
    /// wrote (a thread of ours reads each pipe, and may not have read the last lines when the exit is seen).
    func waitForExit(timeout: TimeInterval) -> Int32? {
        guard exited.wait(timeout: .now() + timeout) == .success else { return nil }
        exited.signal()  // so later waits return at once too
        stdout.waitForEnd(timeout: 2)
        stderr.waitForEnd(timeout: 2)
        switch process.terminationReason {
        case .exit: return process.terminationStatus
        case .uncaughtSignal: return 128 + process.terminationStatus
        @unknown default: return process.terminationStatus
        }
    }

    /// Kills the child with SIGKILL if it still runs (clean-up after a failed test) and waits for it briefly.
    func kill9IfRunning() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            _ = waitForExit(timeout: 5)
        }
    }
}
