import Foundation
import Glibc
import Synchronization

/// The `--scenario idle` run: a control connection CREATEs a number, then `--connections` connections each SUB it
/// and wait for their `+OK`, opened a batch at a time; nothing is published. With all of them subscribed, STATS must
/// count them and subd's RSS must be within `--max-rss-mib`; after they all close, STATS must count only the control
/// connection and subd's RSS must be back within `--after-close-max-mib`.
struct IdleRun {
    /// Connections opened before their replies are read: well under subd's listen backlog (1024), so no connection
    /// waits for a SYN to be sent again.
    private static let batchSize = 256
    /// Seconds one connection may wait for the reply to its SUB (and the control connection for any reply).
    private static let replySeconds = 10
    /// Descriptors needed beyond the idle connections: the control connection, subd's listener, pipes and the like.
    private static let spareDescriptors = 64
    /// Seconds subd may take to count every closed connection as gone.
    private static let closeSeconds = 30.0
    /// How often STATS is asked while waiting for that.
    private static let pollMilliseconds: UInt32 = 100

    /// The parsed command line.
    let options: BenchOptions

    /// What subd is given when subbench starts it: `max_connections` with room for the control connection (its
    /// default, 10,000, would refuse the last ones).
    static func daemonEnvironment(connections: Int) -> [String: String] {
        ["SUBD_MAX_CONNECTIONS": String(connections + 16)]
    }

    /// Raises this process's soft RLIMIT_NOFILE to its hard limit, before a subd is started (it inherits the limit);
    /// throws when even the hard limit cannot hold `connections` plus a few more descriptors. Returns a report line
    /// when the soft limit changed.
    static func raiseDescriptorLimit(connections: Int) throws(BenchError) -> String? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
            throw .io(what: "getrlimit(RLIMIT_NOFILE)", errno: errno)
        }
        let needed = rlim_t(connections + spareDescriptors)
        guard limit.rlim_max >= needed else {
            throw .limit(
                "--connections \(connections) needs at least \(needed) open files per process (subbench and "
                    + "subd each), but the hard limit RLIMIT_NOFILE is \(limit.rlim_max) (ulimit -Hn); raise it (e.g. "
                    + "LimitNOFILE= or /etc/security/limits.conf) or give fewer --connections")
        }
        guard limit.rlim_cur < limit.rlim_max else { return nil }
        let old = limit.rlim_cur
        limit.rlim_cur = limit.rlim_max
        guard setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
            throw .io(what: "raising the RLIMIT_NOFILE soft limit to \(limit.rlim_max)", errno: errno)
        }
        return "open-file limit (RLIMIT_NOFILE): soft \(old) raised to the hard limit \(limit.rlim_max)"
    }

    /// Runs the scenario against `host:port` (`pid`, when known, gives subd's RSS); prints the report lines and
    /// returns what went wrong, if anything.
    func measure(host: String, port: String, pid: Int32?, board: ProgressBoard) throws(BenchError) -> [String] {
        let count = options.connections
        if let pid { try checkDaemonDescriptors(pid: pid) }
        let control = ControlConnection(socket: try BenchSocket.connect(host: host, port: port))
        defer { control.close() }
        try control.socket.setReceiveTimeout(seconds: Self.replySeconds)
        try control.command("CREATE \(options.number)")
        Console.out("subbench: idle \(count) subscribed connections")
        let baseline = pid.flatMap { residentBytes(pid: $0) }
        if let baseline { Console.out("subd RSS before they connected: \(BenchFormat.mebibytes(baseline)) MiB") }

        var sockets: [BenchSocket] = []
        defer { for socket in sockets { socket.close() } }
        let start = MonotonicClock.nanoseconds()
        try subscribeAll(into: &sockets, host: host, port: port, progress: board.idle)
        Console.out(
            "subscribed \(BenchFormat.grouped(count)) connections in "
                + "\(BenchFormat.seconds(MonotonicClock.nanoseconds() - start)) s")

        var problems: [String] = []
        let subscribed = try control.stats()
        Console.out(
            "STATS: connections \(subscribed.text("connections")), "
                + "subscriptions \(subscribed.text("subscriptions"))")
        problems += subscribed.mismatches(
            ["connections": count + 1, "subscriptions": count],
            when: "with every idle connection subscribed")
        Thread.sleep(forTimeInterval: 1)
        problems += checkResident(
            pid: pid, label: "subd RSS with \(BenchFormat.grouped(count)) idle subscribers",
            limitMiB: options.maxResidentMiB, option: "--max-rss-mib", baseline: baseline, connections: count)

        for socket in sockets { socket.close() }
        sockets = []
        board.idle.closed.store(true, ordering: .relaxed)
        let closedAt = MonotonicClock.nanoseconds()
        let closed = try waitUntilClosed(control)
        let waited = BenchFormat.seconds(MonotonicClock.nanoseconds() - closedAt)
        Console.out(
            "closed them; STATS counted \(closed.text("connections")) connection(s) and "
                + "\(closed.text("subscriptions")) subscription(s) \(waited) s later")
        problems += closed.mismatches(
            ["connections": 1, "subscriptions": 0],
            when: "\(Int(Self.closeSeconds)) s after the idle connections closed")
        Thread.sleep(forTimeInterval: 2)
        problems += checkResident(
            pid: pid, label: "subd RSS after they closed", limitMiB: options.afterCloseMaxMiB,
            option: "--after-close-max-mib", baseline: nil, connections: 0)
        return problems
    }

    /// Opens the connections a batch at a time: each batch connects and sends its SUBs, then reads each `+OK`.
    private func subscribeAll(
        into sockets: inout [BenchSocket], host: String, port: String, progress: IdleProgress
    ) throws(BenchError) {
        let count = options.connections
        let command = "SUB \(options.number)"
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }
        sockets.reserveCapacity(count)
        for first in stride(from: 0, to: count, by: Self.batchSize) {
            let batch = first..<min(count, first + Self.batchSize)
            for index in batch {
                let socket: BenchSocket
                do {
                    socket = try BenchSocket.connect(host: host, port: port)
                } catch {
                    throw .daemon("opening idle connection \(index + 1) of \(count): \(error)")
                }
                sockets.append(socket)
                try socket.setReceiveTimeout(seconds: Self.replySeconds)
                try socket.writeAll(command + "\n", what: "sending SUB on idle connection \(index + 1)")
                progress.opened.store(index + 1, ordering: .relaxed)
            }
            for index in batch {
                try awaitReply(to: command, on: sockets[index], index: index, buffer: buffer)
                progress.subscribed.store(index + 1, ordering: .relaxed)
            }
        }
    }

    /// Reads the one reply to `command` on idle connection `index`; anything but `+OK` throws.
    private func awaitReply(
        to command: String, on socket: BenchSocket, index: Int, buffer: UnsafeMutableRawBufferPointer
    ) throws(BenchError) {
        var scanner = FrameScanner(maxLine: 4096)
        var reply: ServerFrame?
        while reply == nil {
            let length: Int
            do {
                length = try socket.read(into: buffer, what: "reading the reply to SUB on idle connection \(index + 1)")
            } catch .io(_, let code) where code == EAGAIN || code == EWOULDBLOCK {
                throw .daemon(
                    "idle connection \(index + 1) got no reply to SUB within \(Self.replySeconds) s (is "
                        + "subd out of file descriptors? its log says 'accept failed' then)")
            }
            guard length > 0 else { throw .connectionClosed("on idle connection \(index + 1) before it answered SUB") }
            try scanner.scan(UnsafeRawBufferPointer(rebasing: buffer[..<length])) { frame in
                if reply == nil { reply = frame }
            }
        }
        switch reply {
        case .ok: return
        case .error(let line) where line.hasPrefix("-ERR LIMIT"):
            throw .refused(
                command: "\(command) on idle connection \(index + 1)",
                reply: line + " (with --server, subd needs max_connections of at least \(options.connections + 1), "
                    + "e.g. SUBD_MAX_CONNECTIONS=\(options.connections + 16))")
        case .error(let line): throw .refused(command: "\(command) on idle connection \(index + 1)", reply: line)
        default: throw .protocolViolation("idle connection \(index + 1) got something other than +OK or -ERR to SUB")
        }
    }

    /// Asks STATS until it counts only the control connection, at most ``closeSeconds``; returns the last answer.
    private func waitUntilClosed(_ control: ControlConnection) throws(BenchError) -> DaemonStats {
        let deadline = MonotonicClock.nanoseconds() + UInt64(Self.closeSeconds * 1e9)
        while true {
            let stats = try control.stats()
            if stats.value("connections") == 1 || MonotonicClock.nanoseconds() >= deadline { return stats }
            usleep(Self.pollMilliseconds * 1000)
        }
    }

    /// Prints subd's RSS (and VmHWM) under `label`; returns a problem when it is over `limitMiB`. With a `baseline`,
    /// the line also gives the growth per connection.
    private func checkResident(
        pid: Int32?, label: String, limitMiB: Int, option: String, baseline: Int?, connections: Int
    ) -> [String] {
        guard let pid, let resident = residentBytes(pid: pid) else {
            Console.out("\(label): not measured" + (pid == nil ? " (give --pid with --server)" : ""))
            return []
        }
        var details = "limit \(limitMiB) MiB"
        if let peak = peakResidentBytes(pid: pid) { details += "; VmHWM \(BenchFormat.mebibytes(peak)) MiB" }
        if let baseline, connections > 0 {
            let perConnection = Double(resident - baseline) / Double(connections) / 1024
            details += "; \(BenchFormat.decimals(perConnection, places: 1)) KiB per connection"
        }
        Console.out("\(label): \(BenchFormat.mebibytes(resident)) MiB (\(details))")
        guard resident > limitMiB << 20 else { return [] }
        return ["\(label) is \(BenchFormat.mebibytes(resident)) MiB, over the limit of \(limitMiB) MiB (\(option))"]
    }

    /// Throws when subd's own soft RLIMIT_NOFILE (from /proc/PID/limits) cannot hold every connection; says nothing
    /// when it cannot be read.
    private func checkDaemonDescriptors(pid: Int32) throws(BenchError) {
        guard let limits = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8) else { return }
        for line in limits.split(separator: "\n") where line.hasPrefix("Max open files") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 4, let soft = Int(fields[3]) else { return }
            let needed = options.connections + Self.spareDescriptors
            guard soft < needed else { return }
            throw .limit(
                "subd (pid \(pid)) may open only \(soft) files (soft RLIMIT_NOFILE), fewer than the \(needed) "
                    + "that --connections \(options.connections) needs; raise its limit or give fewer --connections")
        }
    }
}

/// The idle scenario's counters, for the timeout report.
final class IdleProgress: Sendable {
    /// Idle connections opened (SUB sent) so far.
    let opened = Atomic<Int>(0)
    /// Idle connections whose SUB was answered `+OK` so far.
    let subscribed = Atomic<Int>(0)
    /// True once the idle connections were closed.
    let closed = Atomic<Bool>(false)
}

/// The `key value` lines of one STATS reply.
struct DaemonStats {
    /// Each key's value as sent.
    var values: [String: String] = [:]

    /// The value of `key` as a whole number, if it is one.
    func value(_ key: String) -> Int? {
        values[key].flatMap { Int($0) }
    }

    /// The value of `key` as sent, or `?` when STATS did not have it.
    func text(_ key: String) -> String {
        values[key] ?? "?"
    }

    /// A problem for each key of `expected` whose value is not the expected one; `when` says at which point.
    func mismatches(_ expected: KeyValuePairs<String, Int>, when: String) -> [String] {
        expected.compactMap { key, wanted in
            value(key) == wanted ? nil : "STATS counted \(text(key)) \(key), not \(wanted), \(when)"
        }
    }
}

/// The idle scenario's control connection: one command at a time, each reply read whole before the next.
final class ControlConnection {
    /// The connection.
    let socket: BenchSocket
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
    /// Bytes read but not yet taken as lines.
    private var pending: [UInt8] = []

    /// Wraps a connected socket.
    init(socket: BenchSocket) {
        self.socket = socket
    }

    deinit {
        buffer.deallocate()
    }

    /// Sends `text` and reads its one-line reply; a reply other than `+OK ...` throws.
    func command(_ text: String) throws(BenchError) {
        try socket.writeAll(text + "\n", what: "sending \(text)")
        let reply = try line(what: "reading the reply to \(text)")
        guard reply.hasPrefix("+OK") else { throw .refused(command: text, reply: reply) }
    }

    /// Sends `STATS` and reads its `*<n>` list of `key value` lines.
    func stats() throws(BenchError) -> DaemonStats {
        try socket.writeAll("STATS\n", what: "sending STATS")
        let header = try line(what: "reading the reply to STATS")
        guard header.hasPrefix("*"), let count = Int(header.dropFirst()), count >= 0 else {
            if header.hasPrefix("-ERR") { throw .refused(command: "STATS", reply: header) }
            throw .protocolViolation("STATS answered '\(header)', not a list")
        }
        var stats = DaemonStats()
        for _ in 0..<count {
            let entry = try line(what: "reading the STATS lines")
            guard let space = entry.firstIndex(of: " ") else { continue }
            stats.values[String(entry[..<space])] = String(entry[entry.index(after: space)...])
        }
        return stats
    }

    /// Closes the connection.
    func close() {
        socket.close()
    }

    /// The next line, without its LF (and a CR before it).
    private func line(what: String) throws(BenchError) -> String {
        while true {
            if let newline = pending.firstIndex(of: 0x0A) {
                var end = newline
                if end > 0 && pending[end - 1] == 0x0D { end -= 1 }
                let text = String(decoding: pending[..<end], as: UTF8.self)
                pending.removeSubrange(...newline)
                return text
            }
            guard pending.count <= 65536 else { throw .protocolViolation("a line longer than 65,536 bytes") }
            let length = try socket.read(into: buffer, what: what)
            guard length > 0 else { throw .connectionClosed("while \(what)") }
            pending.append(contentsOf: buffer[..<length])
        }
    }
}
