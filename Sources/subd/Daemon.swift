import Dispatch
import Logging
import SubscriptionCluster
import SubscriptionServer

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the server as a systemd service: signals in, readiness, status, reloads and watchdog pings out, exit
/// status at the end.
///
/// - `READY=1` once every listener accepts and the configured numbers exist.
/// - SIGHUP reloads the configuration between `RELOADING=1` and `READY=1`; a bad one is refused, the old one stays.
/// - SIGTERM/SIGINT send `STOPPING=1`, then drain; ``run()`` returns once the drain is over.
/// - `STATUS=` every ``statusInterval`` and `WATCHDOG=1` at half of `WATCHDOG_USEC` come from timers on the
///   server's own queue, the event loop, so a stuck loop stops both.
///
/// A plain nonisolated class that owns its own serial queue: Dispatch sources made in `@MainActor` context
/// (top-level code) crash on their first event under Swift 6 on Linux, so they are made here. Signals arrive
/// through a ``SignalPipe``; every source is kept in a stored property.
final class Daemon: @unchecked Sendable {
    /// How often the `STATUS=` line is refreshed.
    static let statusInterval: DispatchTimeInterval = .seconds(2)

    private let server: Server
    private let logger: Logger
    private let arguments: DaemonArguments
    private let logLevel: LogLevelSwitch
    private let inherited: [InheritedSocket]
    /// The cluster bridge with `cluster:`; started once the server serves, stopped after the drain.
    private let cluster: ClusterBridge?
    private let notifier = SystemdNotifier()
    /// Owns the state below (signals, reloads, the stop).
    private let queue = DispatchQueue(label: "subd.signals")
    private let signals: SignalPipe
    private var started = false
    /// A SIGHUP arrived that no reload has answered yet.
    private var reloadRequested = false
    private var reloading = false
    private var stopRequested = false
    private var drained = false
    private var stopped: CheckedContinuation<Void, Never>?
    /// Timers on the server's queue; ``statusLine`` is touched only there.
    private var statusTimer: DispatchSourceTimer?
    private var watchdogTimer: DispatchSourceTimer?
    private var statusLine = StatusLine()

    /// `signals` must have been made at the very start of the process, so no signal is missed. `arguments` are
    /// read again on each reload; `inherited` are the sockets systemd passed in (empty: bind the configured ones);
    /// `cluster` is the bridge to the other nodes with `cluster:`.
    init(
        server: Server, logger: Logger, signals: SignalPipe, arguments: DaemonArguments, logLevel: LogLevelSwitch,
        inherited: [InheritedSocket], cluster: ClusterBridge? = nil
    ) {
        self.cluster = cluster
        self.server = server
        self.logger = logger
        self.signals = signals
        self.arguments = arguments
        self.logLevel = logLevel
        self.inherited = inherited
    }

    /// Starts serving and returns once a SIGTERM/SIGINT drain has finished. Throws if a listener cannot start.
    /// Signals are caught before the first listener opens, so a signal right after start-up is never fatal.
    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        // A write past a file size limit (ulimit -f, LimitFSIZE=) fails with EFBIG, which the state log handles as
        // any failed write, instead of killing the daemon.
        signal(SIGXFSZ, SIG_IGN)
        signals.start(on: queue) { [weak self] number in self?.handle(signal: number) }
        let addresses: [ListenAddress]
        do {
            addresses = try server.start(inheritedDescriptors: inherited.map(\.fd))
            try cluster?.start()
        } catch {
            notifier.status("cannot start: \(error)")
            throw error
        }
        if !inherited.isEmpty {
            logger.info(
                "serving the sockets systemd passed in; listen and unix_socket are not bound",
                metadata: ["names": "\(inherited.map(\.name).joined(separator: ","))"]
            )
        }
        startTimers()
        queue.sync {
            started = true
            guard !stopRequested else { return }
            logger.info("subd \(SubdVersion.current) ready", metadata: ["listeners": "\(addresses.count)"])
            notifier.ready(status: currentStatus())
            reloadIfRequested()
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.sync {
                if drained { continuation.resume() } else { stopped = continuation }
            }
        }
    }

    // MARK: Signals

    private func handle(signal number: Int32) {
        switch number {
        case SIGHUP:
            reloadRequested = true
            reloadIfRequested()
        default:
            stop(signal: number)
        }
    }

    private func stop(signal number: Int32) {
        guard !stopRequested else { return }
        stopRequested = true
        let connections = server.snapshot().connections
        logger.info("signal \(number == SIGTERM ? "SIGTERM" : "SIGINT"): draining connections")
        notifier.stopping(status: "stopping: draining \(StatusLine.count(connections, "connection"))")
        server.shutdown { [self] in
            cluster?.stop()
            queue.async {
                self.logger.info("stopped")
                self.drained = true
                self.stopped?.resume()
                self.stopped = nil
            }
        }
    }

    // MARK: Reload

    /// Reads the configuration again (on the daemon queue) when a SIGHUP asked for it and nothing stands in the
    /// way: a SIGHUP before the start is answered once subd is ready, one during a reload once that reload is over.
    private func reloadIfRequested() {
        guard reloadRequested, started, !reloading, !stopRequested else { return }
        reloadRequested = false
        reloading = true
        notifier.reloading(status: "reloading the configuration")
        logger.info("SIGHUP: reloading the configuration")
        let arguments = self.arguments
        Task {
            let result: Result<ConfigLoader.Loaded, ConfigurationError>
            do throws(ConfigurationError) {
                result = .success(try await ConfigLoader.load(arguments))
            } catch {
                result = .failure(error)
            }
            self.queue.async { self.finishReload(result) }
        }
    }

    private func finishReload(_ result: Result<ConfigLoader.Loaded, ConfigurationError>) {
        do {
            let loaded = try result.get()
            let outcome = try server.reconfigure(loaded.server)
            for key in outcome.needsRestart {
                switch key {
                case "threads":
                    logger.warning("reload: threads changed; subd keeps the threads it started with until it restarts")
                case "state_dir", "fsync":
                    logger.warning("reload: \(key) changed; the state stays as it is until subd restarts")
                case "metrics_listen":
                    // Bound by subd itself, with or without the sockets systemd passes in.
                    logger.warning("reload: \(key) changed; the listeners stay as they are until subd restarts")
                case _ where inherited.isEmpty:
                    logger.warning("reload: \(key) changed; the listeners stay as they are until subd restarts")
                default:
                    logger.warning("reload: \(key) changed; not used while serving the sockets systemd passed in")
                }
            }
            if loaded.cluster != cluster?.settings {
                logger.warning(
                    "reload: cluster changed; the node keeps the cluster settings it started with until subd restarts")
            }
            var metadata: Logger.Metadata = ["log_level": "\(loaded.logLevel)"]
            if !outcome.createdNumbers.isEmpty {
                metadata["created"] = "\(outcome.createdNumbers.joined(separator: ","))"
            }
            logger.info("configuration reloaded", metadata: metadata)
            logLevel.level = loaded.logLevel
        } catch {
            logger.error("reload refused, the running configuration stays in force: \(error)")
        }
        if !stopRequested { notifier.ready(status: currentStatus()) }
        reloading = false
        reloadIfRequested()
    }

    // MARK: Status and watchdog

    /// The status line now; from the daemon queue.
    private func currentStatus() -> String {
        server.queue.sync { nextStatusLine() }
    }

    /// The next status line; only on the server's queue (``statusLine`` lives there).
    private func nextStatusLine() -> String {
        statusLine.next(server.currentStats())
    }

    /// Starts the status timer (when systemd listens) and the watchdog (when systemd asks for one), both on the
    /// server's queue.
    private func startTimers() {
        guard notifier.isEnabled else { return }
        let status = DispatchSource.makeTimerSource(queue: server.queue)
        status.schedule(deadline: .now() + Self.statusInterval, repeating: Self.statusInterval)
        status.setEventHandler { [unowned self] in
            self.notifier.status(self.nextStatusLine())
        }
        statusTimer = status
        status.resume()

        guard let interval = SystemdNotifier.watchdogMicroseconds() else { return }
        let watchdog = DispatchSource.makeTimerSource(queue: server.queue)
        watchdog.schedule(deadline: .now(), repeating: .microseconds(interval / 2))
        let pinger = notifier
        watchdog.setEventHandler { pinger.watchdog() }
        watchdogTimer = watchdog
        watchdog.resume()
        logger.info("watchdog: WATCHDOG=1 every \(interval / 2_000) ms from the event loop")
    }
}
