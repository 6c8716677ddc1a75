import Dispatch
import Foundation

/// One benchmark run: set up, publish, wait for every delivery, check the counts, report. The fan-out scenario is
/// measured here; the pipeline scenario by ``PipelineRun``, the idle one by ``IdleRun``.
struct BenchRun {
    /// The parsed command line.
    let options: BenchOptions

    /// Runs the benchmark, prints the report and returns the exit status (0 when every count was right).
    func execute() -> Int32 {
        let board = ProgressBoard()
        var daemon: DaemonProcess?
        var certificate: ThrowawayCertificate?
        // After finish() stopped subd: it reads the files only at its start.
        defer { certificate?.remove() }
        do {
            let host: String
            let port: String
            var pid: Int32?
            var environment: [String: String] = [:]
            if options.scenario == .idle {
                // Before subd is started: it inherits the raised limit.
                if let raised = try IdleRun.raiseDescriptorLimit(connections: options.connections) {
                    Console.out(raised)
                }
                environment = IdleRun.daemonEnvironment(connections: options.connections)
            }
            var caFile = options.caFile
            switch options.target {
            case .spawn(let path):
                if options.tls {
                    let made = try ThrowawayCertificate.make()
                    certificate = made
                    board.setCertificate(made)
                    caFile = made.certificatePath
                }
                let started = try DaemonProcess(
                    path: path, environment: environment, certificate: certificate,
                    webSocketPath: options.webSocket ? BenchOptions.webSocketPath : nil)
                board.setDaemon(started)
                daemon = started
                (host, port, pid) = ("127.0.0.1", started.port, started.pid)
            case .running(let runningHost, let runningPort, let runningPid):
                (host, port, pid) = (runningHost, runningPort, runningPid)
            }
            let endpoint = BenchEndpoint(
                host: host, port: port, tls: options.tls ? try TLSClientContext(caFile: caFile) : nil,
                webSocketPath: options.webSocket ? BenchOptions.webSocketPath : nil)
            let options = options
            let watchdog = Watchdog(seconds: options.timeoutSeconds) {
                board.timedOut(after: options.timeoutSeconds, options: options)
            }
            let problems: [String]
            do {
                switch options.scenario {
                case .fanOut:
                    problems = try measure(endpoint: endpoint, pid: pid, board: board)
                case .pipeline:
                    problems = try PipelineRun(options: options).measure(host: host, port: port, pid: pid, board: board)
                case .idle:
                    problems = try IdleRun(options: options).measure(host: host, port: port, pid: pid, board: board)
                }
            } catch {
                problems = [error.description]
            }
            watchdog.disarm()
            return finish(daemon: daemon, problems: problems)
        } catch {
            return finish(daemon: daemon, problems: [error.description])
        }
    }

    /// Stops a started daemon, prints the problems (with subd's last words if any) and picks the exit status.
    private func finish(daemon: DaemonProcess?, problems: [String]) -> Int32 {
        var problems = problems
        if let daemon, let problem = daemon.stop() { problems.append(problem) }
        guard !problems.isEmpty else { return 0 }
        for problem in problems { Console.error(problem) }
        if let daemon {
            Console.error("subd's last stderr lines:")
            for line in daemon.log.recentLines { Console.errorQuote("  \(line)") }
        }
        return 1
    }

    /// The measured part: prints the report lines and returns what went wrong, if anything.
    private func measure(endpoint: BenchEndpoint, pid: Int32?, board: ProgressBoard) throws(BenchError) -> [String] {
        let totalTarget = options.messages + options.latencySamples
        let publisher = try Publisher(
            endpoint: endpoint, number: options.number, size: options.size, window: options.window,
            expectedReceivers: options.expectedReceivers ?? options.subscribers, progress: board.publisher)
        try publisher.command("CREATE \(options.number)" + (options.retained ? " retain" : ""))

        let milestones = SubscriberMilestones()
        var subscribers: [Subscriber] = []
        // Wakes any subscriber thread still blocked in a read when the run ends early; the process exits next.
        defer { for subscriber in subscribers { subscriber.connection.shutdown() } }
        // Subscribers go to the other nodes in turn when --subscribers-at names them, else to the one daemon.
        let subscriberEndpoints = options.subscriberServers.map {
            BenchEndpoint(host: $0.host, port: $0.port, tls: nil)
        }
        for index in 0..<options.subscribers {
            let subscriber = try Subscriber.start(
                index: index,
                endpoint: subscriberEndpoints.isEmpty
                    ? endpoint : subscriberEndpoints[index % subscriberEndpoints.count],
                number: options.number, throughputTarget: options.messages, milestones: milestones)
            subscribers.append(subscriber)
            board.add(subscriber.progress)
        }
        milestones.subscribed.wait()
        if let failure = subscribers.lazy.compactMap({ $0.progress.failure.withLock { $0 } }).first {
            throw .daemon("a subscriber could not subscribe: \(failure)")
        }

        Console.out(
            "subbench: fan-out" + (endpoint.tls == nil ? "" : " over TLS")
                + (endpoint.webSocketPath == nil ? "" : " over WebSocket") + " 1 publisher -> "
                + "\(options.subscribers) subscribers, \(options.messages) msgs x \(options.size) B, "
                + "window \(options.window)" + (publisher.negotiated.map { ", \($0)" } ?? "")
                + (options.subscriberServers.isEmpty
                    ? ""
                    : ", subscribers on "
                        + options.subscriberServers.map { "\($0.host):\($0.port)" }.joined(separator: " and "))
        )
        let start = MonotonicClock.nanoseconds()
        try publisher.publish(count: options.messages, window: options.window)
        let published = MonotonicClock.nanoseconds() - start
        waitForRemoteDeliveries(subscribers, target: options.messages)
        drain(subscribers, until: milestones.throughputDrained)
        let lastDelivery = subscribers.map { $0.progress.throughputDoneAt.load(ordering: .relaxed) }.max() ?? 0
        let delivered = lastDelivery > start ? lastDelivery - start : published
        let deliveredCount = subscribers.reduce(0) { $0 + $1.progress.received.load(ordering: .relaxed) }

        let roundTrips = try publisher.roundTrips(samples: options.latencySamples).sorted()
        waitForRemoteDeliveries(subscribers, target: totalTarget)
        drain(subscribers, until: milestones.finalDrained)
        let peak = pid.flatMap { peakResidentBytes(pid: $0) }

        let width = max(8, String(deliveredCount).count)
        Console.out(BenchFormat.throughput("published", options.messages, nanoseconds: published, width: width))
        Console.out(BenchFormat.throughput("delivered", deliveredCount, nanoseconds: delivered, width: width))
        if !roundTrips.isEmpty {
            let p50 = BenchFormat.milliseconds(BenchFormat.percentile(roundTrips, 0.50))
            let p99 = BenchFormat.milliseconds(BenchFormat.percentile(roundTrips, 0.99))
            let maximum = BenchFormat.milliseconds(roundTrips.last ?? 0)
            Console.out(
                "publish round-trip (window 1, \(roundTrips.count) samples): "
                    + "p50 \(p50) ms, p99 \(p99) ms, max \(maximum) ms")
        }
        if let peak {
            Console.out("subd peak RSS: \(BenchFormat.mebibytes(peak)) MiB")
        } else {
            Console.out("subd peak RSS: not measured" + (pid == nil ? " (give --pid with --server)" : ""))
        }
        return problems(publisher: publisher.check, subscribers: subscribers, totalTarget: totalTarget)
    }

    /// With subscribers on other nodes (`--subscribers-at`), a `+PONG` from a subscriber's node does not mean that
    /// every message published on the publisher's node has crossed the cluster yet: waits (10 s at most) until every
    /// live subscriber counted `target` messages before the drain. A message that never comes is reported as lost
    /// after it. Nothing to wait for on one daemon.
    private func waitForRemoteDeliveries(_ subscribers: [Subscriber], target: Int) {
        guard !options.subscriberServers.isEmpty else { return }
        let deadline = MonotonicClock.nanoseconds() + 10_000_000_000
        while MonotonicClock.nanoseconds() < deadline {
            let waiting = subscribers.contains { subscriber in
                subscriber.progress.failure.withLock({ $0 }) == nil
                    && subscriber.progress.received.load(ordering: .relaxed) < target
            }
            if !waiting { return }
            usleep(1_000)
        }
    }

    /// Has every live subscriber send a `PING` and waits until each has its `+PONG` (or has failed).
    private func drain(_ subscribers: [Subscriber], until milestone: DispatchGroup) {
        for subscriber in subscribers where subscriber.progress.failure.withLock({ $0 }) == nil {
            subscriber.requestDrain()
        }
        milestone.wait()
    }

    /// Every count that is not what a correct server produces.
    private func problems(publisher check: ReplyCheck, subscribers: [Subscriber], totalTarget: Int) -> [String] {
        var problems: [String] = []
        if check.receiverMismatches > 0 {
            problems.append(
                "\(check.receiverMismatches) PUB replies did not count \(options.subscribers) receivers "
                    + "(first: '\(check.firstMismatch ?? "")', reply \(check.firstMismatchAt) of \(check.replies))")
        }
        if check.errors > 0 {
            problems.append("\(check.errors) PUB replies were errors (first: '\(check.firstError ?? "")')")
        }
        for subscriber in subscribers {
            let progress = subscriber.progress
            let received = progress.received.load(ordering: .relaxed)
            if let failure = progress.failure.withLock({ $0 }) {
                problems.append(
                    "subscriber \(progress.index) stopped after \(received) of \(totalTarget) msgs: "
                        + failure)
            } else if received != totalTarget {
                let what = received < totalTarget ? "lost" : "extra"
                problems.append(
                    "subscriber \(progress.index) received \(received) of \(totalTarget) msgs "
                        + "(\(abs(received - totalTarget)) \(what))")
            }
        }
        return problems
    }
}
