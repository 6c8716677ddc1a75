import Dispatch
import Foundation
import Synchronization

/// The stderr of a started subd, drained by a thread: the bound port and the last lines, for reports.
final class DaemonLog: Sendable {
    private static let keptLines = 20
    /// The listener kind whose line gives the port: `tcp`, or `tls` for a `tls://` listener.
    let transport: String
    private let state = Locked<(port: String?, ended: Bool, lines: [String])>((nil, false, []))
    private let changed = DispatchSemaphore(value: 0)

    /// A log that takes the port from `listening on <transport> HOST:PORT` (`tcp` or `tls`).
    init(transport: String) {
        self.transport = transport
    }

    /// Waits until subd logged `listening on <transport> HOST:PORT` and returns the port, or nil if its stderr ended
    /// first or `seconds` passed.
    func waitForPort(seconds: Double) -> String? {
        // The stderr pipe reaching its end means subd exited (or closed stderr): no port will come.
        let deadline = DispatchTime.now() + seconds
        while true {
            let (port, ended) = state.withLock { ($0.port, $0.ended) }
            if port != nil || ended { return port }
            if changed.wait(timeout: deadline) == .timedOut { return state.withLock { $0.port } }
        }
    }

    /// Waits up to `seconds` for subd's stderr to reach its end, so its last lines are in `recentLines`.
    func waitForEnd(seconds: Double) {
        let deadline = DispatchTime.now() + seconds
        while !ended {
            if changed.wait(timeout: deadline) == .timedOut { return }
        }
    }

    /// True once subd's stderr reached its end.
    var ended: Bool {
        state.withLock { $0.ended }
    }

    /// The last lines subd wrote to stderr.
    var recentLines: [String] {
        state.withLock { $0.lines }
    }

    /// Starts the thread that reads `fd` to its end.
    fileprivate func drain(fd: Int32) {
        let thread = Thread { [self] in
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
            defer { buffer.deallocate() }
            var partial: [UInt8] = []
            while true {
                let length = read(fd, buffer.baseAddress, buffer.count)
                if length < 0 && errno == EINTR { continue }
                guard length > 0 else { break }
                for byte in buffer[..<length] {
                    if byte == 0x0A {
                        record(String(decoding: partial, as: UTF8.self))
                        partial.removeAll(keepingCapacity: true)
                    } else if partial.count < 4096 {
                        partial.append(byte)
                    }
                }
            }
            close(fd)
            state.withLock { $0.ended = true }
            changed.signal()
        }
        thread.name = "subd-stderr"
        thread.start()
    }

    private func record(_ line: String) {
        let port = Self.listeningPort(in: line, transport: transport)
        let isNew = state.withLock { state -> Bool in
            state.lines.append(line)
            if state.lines.count > Self.keptLines { state.lines.removeFirst() }
            guard let port, state.port == nil else { return false }
            state.port = port
            return true
        }
        if isNew { changed.signal() }
    }

    /// The port of `listening on <transport> ([0-9.]+):([0-9]+)` in `line`, if it has one.
    static func listeningPort(in line: String, transport: String) -> String? {
        guard let marker = line.range(of: "listening on \(transport) ") else { return nil }
        let rest = line[marker.upperBound...]
        let host = rest.prefix { $0 == "." || $0.isASCII && $0.isNumber }
        guard !host.isEmpty, rest.dropFirst(host.count).first == ":" else { return nil }
        let port = rest.dropFirst(host.count + 1).prefix { $0.isASCII && $0.isNumber }
        return port.isEmpty ? nil : String(port)
    }
}

/// A subd started by the benchmark on `127.0.0.1:0` (`tls://127.0.0.1:0` with a certificate), stopped with SIGTERM
/// at the end.
final class DaemonProcess: Sendable {
    /// The daemon's process id.
    let pid: Int32
    /// The TCP port it bound (its TLS listener's with a certificate).
    let port: String
    /// Its stderr.
    let log: DaemonLog
    private let process: Process
    private let exited = DispatchSemaphore(value: 0)

    /// Starts `path --listen 127.0.0.1:0 --log-level info` with this process's environment plus `environment` (e.g.
    /// `SUBD_MAX_CONNECTIONS`) and waits (at most 10 s) for the port it logs. With `certificate` the listener is
    /// `tls://127.0.0.1:0` and subd gets `SUBD_TLS_CERT` and `SUBD_TLS_KEY` naming its files; with `webSocketPath`
    /// it is `ws://127.0.0.1:0/PATH` (`wss://` with a certificate). subd inherits this
    /// process's resource limits, RLIMIT_NOFILE among them.
    init(
        path: String, environment: [String: String] = [:], certificate: ThrowawayCertificate? = nil,
        webSocketPath: String? = nil
    ) throws(BenchError) {
        guard access(path, X_OK) == 0 else { throw .daemon("cannot start \(path): \(errnoText(errno))") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        var environment = environment
        if let certificate {
            environment["SUBD_TLS_CERT"] = certificate.certificatePath
            environment["SUBD_TLS_KEY"] = certificate.keyPath
        }
        let transport =
            webSocketPath == nil ? (certificate == nil ? "tcp" : "tls") : (certificate == nil ? "ws" : "wss")
        let address =
            webSocketPath.map { "\(transport)://127.0.0.1:0\($0)" }
            ?? (transport == "tls" ? "tls://127.0.0.1:0" : "127.0.0.1:0")
        process.arguments = ["--listen", address, "--log-level", "info"]
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, given in given }
        }
        let errorPipe = Pipe()
        process.standardError = errorPipe
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        let exited = exited
        process.terminationHandler = { _ in exited.signal() }
        do {
            try process.run()
        } catch {
            throw .daemon("cannot start \(path): \(error)")
        }
        let log = DaemonLog(transport: transport)
        // Foundation closed the pipe's write end in this process when it started subd; the drain thread owns a
        // copy of the read end so that it sees end-of-file when subd exits.
        let readEnd = dup(errorPipe.fileHandleForReading.fileDescriptor)
        try? errorPipe.fileHandleForReading.close()
        log.drain(fd: readEnd)
        self.process = process
        self.pid = process.processIdentifier
        self.log = log
        guard let port = log.waitForPort(seconds: 10) else {
            let ended = log.ended
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            let lines = log.recentLines.map { "\n  " + $0 }.joined()
            let what =
                !ended
                ? "did not log 'listening on \(transport) HOST:PORT' within 10 s" : "exited before listening"
            throw .daemon("\(path) \(what); its last stderr lines:" + (lines.isEmpty ? " (none)" : lines))
        }
        self.port = port
    }

    /// Sends SIGTERM and waits up to `seconds` (then SIGKILL); returns a problem with the exit, if any.
    func stop(seconds: Double = 10) -> String? {
        guard process.isRunning else {
            return "subd had already exited (status \(process.terminationStatus))"
        }
        kill(pid, SIGTERM)
        if exited.wait(timeout: .now() + seconds) == .timedOut {
            kill(pid, SIGKILL)
            _ = exited.wait(timeout: .now() + 5)
            return "subd did not exit within \(Int(seconds)) s of SIGTERM; killed it"
        }
        log.waitForEnd(seconds: 1)
        if process.terminationReason == .uncaughtSignal {
            let signal = process.terminationStatus
            return signal == SIGTERM
                ? "subd was killed by SIGTERM instead of stopping cleanly with exit status 0"
                : "subd was killed by signal \(signal)"
        }
        return process.terminationStatus == 0 ? nil : "subd exited with status \(process.terminationStatus)"
    }
}

/// Peak resident set size (`VmHWM` of /proc/PID/status) in bytes, or nil if it cannot be read.
func peakResidentBytes(pid: Int32) -> Int? {
    statusBytes(pid: pid, field: "VmHWM")
}

/// Resident set size now (`VmRSS` of /proc/PID/status) in bytes, or nil if it cannot be read.
func residentBytes(pid: Int32) -> Int? {
    statusBytes(pid: pid, field: "VmRSS")
}

/// A `FIELD:   N kB` line of /proc/PID/status in bytes, or nil if it cannot be read.
private func statusBytes(pid: Int32, field: String) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 2, let kibibytes = Int(fields[1]) else { return nil }
        return kibibytes * 1024
    }
    return nil
}
