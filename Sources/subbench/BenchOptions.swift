import Glibc

/// Where the daemon under test comes from.
enum BenchTarget: Sendable {
    /// Start this subd binary on an ephemeral port and stop it at the end.
    case spawn(path: String)
    /// Use a daemon that is already running; `pid`, when known, gives its peak RSS.
    case running(host: String, port: String, pid: Int32?)
}

/// What a run measures.
enum BenchScenario: String, Sendable {
    /// One publisher pipelines PUB frames to N subscribers of one number (throughput, latency, peak RSS).
    case fanOut = "fan-out"
    /// One connection SUBs its own number and pipelines SEND commands without reading (subd's memory while it
    /// holds a client's unread output, then every reply and push in order).
    case pipeline
    /// N connections each SUB one number and stay idle (subd's RSS with them subscribed, then after they closed).
    case idle
}

/// The parsed command line of subbench.
struct BenchOptions: Sendable {
    /// The daemon to measure.
    var target: BenchTarget
    /// What to measure.
    var scenario = BenchScenario.fanOut
    /// How many subscriber connections receive every message.
    var subscribers = 10
    /// How many messages the publisher sends in the throughput phase.
    var messages = 500_000
    /// Payload size of each message in bytes.
    var size = 128
    /// Most publishes sent but not yet acknowledged.
    var window = 1000
    /// The subscription number used for the run.
    var number = "BENCH"
    /// Create it as a retained number (every PUB becomes its value, saved when subd has a `state_dir`).
    var retained = false
    /// One-at-a-time publishes timed after the throughput phase (0: none).
    var latencySamples = 1000
    /// Seconds the whole run may take before it is abandoned.
    var timeoutSeconds = 120.0
    /// Pipeline scenario: the most subd's peak RSS may be, in MiB; idle scenario: the most its RSS may be with every
    /// connection subscribed (default 100).
    var maxResidentMiB = 64
    /// Idle scenario: how many subscribed connections to open.
    var connections = 10_000
    /// Idle scenario: the most subd's RSS may be, in MiB, once the idle connections closed.
    var afterCloseMaxMiB = 50
    /// Fan-out scenario: every connection is a TLS client that verifies the server (`--tls`).
    var tls = false
    /// Fan-out scenario: every connection speaks the line protocol inside WebSocket messages (`--ws`), to a
    /// `ws://127.0.0.1:0/` listener (`wss://` with `--tls`); with `--server`, the server's listener at `/`.
    var webSocket = false
    /// The path of the WebSocket listener `--ws` uses.
    static let webSocketPath = "/"
    /// With `--server` and `--tls`: the PEM file of CAs to verify the daemon with; nil for the system's trusted CAs.
    var caFile: String?
    /// Fan-out scenario: other daemons the subscribers connect to, in turn (`--subscribers-at`, repeatable): the
    /// nodes of a cluster, the publisher's being `--server`. Empty: every connection goes to the one daemon.
    var subscriberServers: [(host: String, port: String)] = []
    /// The receivers each `+OK` must count (`--expect-receivers`); nil for `--subscribers` (a cluster node with
    /// `ack: local` counts only its own).
    var expectedReceivers: Int?

    /// The help text printed by `--help` and after a usage error.
    static let usage = """
        usage: subbench [--subd PATH | --server HOST:PORT [--pid PID] [--ca FILE]] [--tls] [--ws] [--scenario fan-out]
                        [--subscribers N] [--messages N] [--size BYTES] [--window N] [--number NAME] [--retain]
                        [--latency-samples N] [--timeout SECONDS]
                        [--subscribers-at HOST:PORT]... [--expect-receivers N]
               subbench [--subd PATH | --server HOST:PORT [--pid PID]] --scenario pipeline [--messages N]
                        [--size BYTES] [--number NAME] [--max-rss-mib MIB] [--timeout SECONDS]
               subbench [--subd PATH | --server HOST:PORT [--pid PID]] --scenario idle [--connections N]
                        [--number NAME] [--max-rss-mib MIB] [--after-close-max-mib MIB] [--timeout SECONDS]

        Benchmark for subd. The fan-out scenario (the default): one publisher pipelines PUB frames (at most
        --window unacknowledged) to N subscribers of one number (retained with --retain), then times
        --latency-samples single PUB round-trips. With --tls (fan-out only) the publisher and every subscriber are
        TLS clients that verify the server: with --subd, subbench makes a throwaway certificate for 127.0.0.1 with
        the openssl command in a temporary directory (removed at the end) and starts subd with a
        tls://127.0.0.1:0 listener; with --server, the daemon's certificate must verify against --ca FILE (default:
        the system's trusted CAs) and name HOST. With --ws (fan-out only) every connection speaks the protocol
        inside WebSocket messages: with --subd, subd gets a ws://127.0.0.1:0/ listener (wss:// with --tls); with
        --server, HOST:PORT must be a WebSocket listener at /. The pipeline scenario: one connection CREATEs and SUBs
        a number, then pipelines --messages SEND commands to it without reading anything until writing stalls for 1 s
        (subd stops reading a client whose replies pile up); then it reads every MSG push and +OK reply, checking
        their order, while it writes the rest, and checks subd's peak RSS against --max-rss-mib. The idle scenario: a
        control connection CREATEs a number, then --connections connections each SUB it and wait for +OK (nothing is
        published); STATS must count them, and subd's RSS 1 s later must be within --max-rss-mib; then they all close,
        STATS must count only the control connection within 30 s, and subd's RSS 2 s later must be within --after-
        close-max-mib. It first raises its soft open-file limit to the hard limit; a subd it
        starts inherits that limit and gets SUBD_MAX_CONNECTIONS=N+16.

          --subd PATH            start this subd binary on 127.0.0.1:0 and stop it at the end
                                 (default: the subd next to subbench, if there is one)
          --server HOST:PORT     use a running daemon instead
          --pid PID              with --server: the daemon's process id, to report its peak RSS
          --scenario NAME        fan-out, pipeline or idle (default fan-out)
          --tls                  fan-out: every connection over TLS, verifying the server's certificate
          --ws                   fan-out: every connection over WebSocket (the line protocol in binary messages)
          --ca FILE              with --server and --tls: the CA certificates (PEM) to verify the daemon with
                                 (default: the system's trusted CAs)
          --subscribers-at HOST:PORT
                                 fan-out with --server: subscribers connect to these daemons in turn (repeatable;
                                 a cluster's other nodes); each waits for all its messages before its drain
          --expect-receivers N   the receivers each +OK must count (default: --subscribers; 0 for a cluster node
                                 with ack: local, which counts its own subscribers only)
          --subscribers N        fan-out: subscriber connections (default 10)
          --messages N           messages to publish (default 500000; pipeline: 300000)
          --size BYTES           payload size (default 128; pipeline: at least 10)
          --window N             fan-out: most publishes in flight (default 1000)
          --number NAME          subscription number to use (default BENCH)
          --latency-samples N    fan-out: single PUB round-trips to time afterwards, 0 for none (default 1000)
          --connections N        idle: subscribed connections to open (default 10000)
          --max-rss-mib MIB      pipeline: the most subd's peak RSS may be (default 64); idle: the most its
                                 RSS may be with every connection subscribed (default 100)
          --after-close-max-mib MIB
                                 idle: the most subd's RSS may be 2 s after they closed (default 50)
          --timeout SECONDS      give up after this long (default 120)

        Exit status: 0 all messages delivered and counted right (pipeline: and subd's peak RSS within the
        limit; idle: every connection subscribed, STATS counted right and subd's RSS within both limits), 1
        timeout, lost, extra, reordered or miscounted messages, a server error, a TLS failure (no openssl
        command, a certificate that does not verify), an RSS over a limit or (idle) an open-file limit too low for
        --connections, 64 usage error.
        """

    /// Parses the arguments that follow the program name; `nil` means help was asked for.
    static func parse(_ arguments: [String]) throws(BenchError) -> BenchOptions? {
        var subdPath: String?
        var server: String?
        var pid: Int32?
        var options = BenchOptions(target: .spawn(path: ""))
        var given: Set<String> = []
        var index = 0
        func value(_ name: String) throws(BenchError) -> String {
            index += 1
            guard index < arguments.count else { throw .usage("\(name) needs a value") }
            return arguments[index]
        }
        func count(_ name: String, minimum: Int) throws(BenchError) -> Int {
            let text = try value(name)
            guard let number = Int(text), number >= minimum else {
                throw .usage("\(name) needs a whole number of at least \(minimum), not '\(text)'")
            }
            return number
        }
        while index < arguments.count {
            let argument = arguments[index]
            given.insert(argument)
            switch argument {
            case "-h", "--help": return nil
            case "--subd": subdPath = try value(argument)
            case "--server": server = try value(argument)
            case "--pid": pid = Int32(try count(argument, minimum: 1))
            case "--subscribers": options.subscribers = try count(argument, minimum: 0)
            case "--messages": options.messages = try count(argument, minimum: 1)
            case "--size": options.size = try count(argument, minimum: 0)
            case "--window": options.window = try count(argument, minimum: 1)
            case "--latency-samples": options.latencySamples = try count(argument, minimum: 0)
            case "--max-rss-mib": options.maxResidentMiB = try count(argument, minimum: 1)
            case "--connections": options.connections = try count(argument, minimum: 1)
            case "--after-close-max-mib": options.afterCloseMaxMiB = try count(argument, minimum: 1)
            case "--scenario":
                let name = try value(argument)
                guard let scenario = BenchScenario(rawValue: name) else {
                    throw .usage("--scenario needs fan-out, pipeline or idle, not '\(name)'")
                }
                options.scenario = scenario
            case "--retain": options.retained = true
            case "--tls": options.tls = true
            case "--ws": options.webSocket = true
            case "--ca": options.caFile = try value(argument)
            case "--subscribers-at": options.subscriberServers.append(try splitHostPort(try value(argument)))
            case "--expect-receivers": options.expectedReceivers = try count(argument, minimum: 0)
            case "--number":
                options.number = try value(argument)
                guard isPlainNumber(options.number) else {
                    throw .usage("--number needs a subscription number without spaces or wildcards")
                }
            case "--timeout":
                let text = try value(argument)
                guard let seconds = Double(text), seconds > 0 else {
                    throw .usage("--timeout needs a number of seconds above 0, not '\(text)'")
                }
                options.timeoutSeconds = seconds
            default:
                throw .usage("unknown argument '\(argument)'")
            }
            index += 1
        }
        options.target = try target(subdPath: subdPath, server: server, pid: pid)
        try options.applyScenarioDefaults(given: given)
        try options.checkTLS()
        return options
    }

    /// Gives the pipeline and idle scenarios their own defaults and refuses options that do not go with the chosen
    /// scenario.
    private mutating func applyScenarioDefaults(given: Set<String>) throws(BenchError) {
        let idleOnly = ["--connections", "--after-close-max-mib"]
        switch scenario {
        case .fanOut:
            if given.contains("--max-rss-mib") { throw .usage("--max-rss-mib goes with --scenario pipeline or idle") }
            for option in idleOnly where given.contains(option) { throw .usage("\(option) goes with --scenario idle") }
        case .pipeline:
            for option in ["--subscribers", "--window", "--latency-samples"] where given.contains(option) {
                throw .usage("\(option) goes with the fan-out scenario, not --scenario pipeline")
            }
            for option in idleOnly where given.contains(option) {
                throw .usage("\(option) goes with --scenario idle, not --scenario pipeline")
            }
            if !given.contains("--messages") { messages = 300_000 }
            latencySamples = 0
            guard size >= 10 else {
                throw .usage(
                    "--scenario pipeline needs --size of at least 10 (each payload starts with its "
                        + "10-digit sequence number)")
            }
        case .idle:
            for option in ["--subscribers", "--messages", "--size", "--window", "--latency-samples"]
            where given.contains(option) {
                throw .usage("\(option) does not go with --scenario idle (it publishes nothing)")
            }
            if !given.contains("--max-rss-mib") { maxResidentMiB = 100 }
            latencySamples = 0
        }
    }

    /// Refuses `--tls` outside the fan-out scenario and `--ca` without `--tls --server`.
    private func checkTLS() throws(BenchError) {
        if tls && scenario != .fanOut {
            throw .usage("--tls goes with the fan-out scenario only, not --scenario \(scenario.rawValue)")
        }
        if webSocket && scenario != .fanOut {
            throw .usage("--ws goes with the fan-out scenario only, not --scenario \(scenario.rawValue)")
        }
        if !subscriberServers.isEmpty {
            guard scenario == .fanOut, case .running = target else {
                throw .usage("--subscribers-at goes with the fan-out scenario and --server (the publisher's node)")
            }
            guard !tls else { throw .usage("--subscribers-at does not go with --tls") }
        }
        guard caFile != nil else { return }
        guard tls else { throw .usage("--ca goes with --tls") }
        if case .spawn = target {
            throw .usage("--ca goes with --server: with --subd, subbench makes its own certificate")
        }
    }

    private static func target(subdPath: String?, server: String?, pid: Int32?) throws(BenchError) -> BenchTarget {
        switch (subdPath, server) {
        case (.some, .some):
            throw .usage("give either --subd or --server, not both")
        case (.some(let path), nil):
            guard pid == nil else { throw .usage("--pid goes with --server only") }
            return .spawn(path: path)
        case (nil, .some(let address)):
            let (host, port) = try splitHostPort(address)
            return .running(host: host, port: port, pid: pid)
        case (nil, nil):
            guard pid == nil else { throw .usage("--pid goes with --server only") }
            guard let path = siblingSubd() else {
                throw .usage("no subd next to subbench: give --subd PATH or --server HOST:PORT")
            }
            return .spawn(path: path)
        }
    }

    /// Splits `HOST:PORT` (or `[IPv6]:PORT`) at its last colon.
    static func splitHostPort(_ address: String) throws(BenchError) -> (host: String, port: String) {
        guard let colon = address.lastIndex(of: ":") else {
            throw .usage("--server needs HOST:PORT, e.g. 127.0.0.1:7827, not '\(address)'")
        }
        var host = String(address[..<colon])
        let port = String(address[address.index(after: colon)...])
        if host.hasPrefix("["), host.hasSuffix("]") {
            host = String(host.dropFirst().dropLast())
        }
        guard !host.isEmpty, let portNumber = Int(port), (1...65535).contains(portNumber) else {
            throw .usage("--server needs HOST:PORT, e.g. 127.0.0.1:7827, not '\(address)'")
        }
        return (host, port)
    }

    /// True for a name that can be sent as one protocol word and is not a wildcard pattern.
    private static func isPlainNumber(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 200 else { return false }
        let hasBadByte = bytes.contains { $0 <= 0x20 || $0 == 0x7F }
        let tokens = name.split(separator: ".", omittingEmptySubsequences: false)
        return !hasBadByte && !tokens.contains { $0.isEmpty || $0 == "*" || $0 == ">" }
    }

    /// The `subd` binary in the same folder as this executable, when there is one.
    private static func siblingSubd() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let executable = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = executable.lastIndex(of: "/") else { return nil }
        let candidate = String(executable[..<slash]) + "/subd"
        return access(candidate, X_OK) == 0 ? candidate : nil
    }
}
