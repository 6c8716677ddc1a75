#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Logging
import SubscriptionServer

/// Runs the server as a process: signals in, exit status out.
///
/// A plain nonisolated class that owns its own serial queue: Dispatch sources made in `@MainActor` context
/// (top-level code) crash on their first event under Swift 6 on Linux, so they are made here. The signal sources
/// are kept in a stored property; a released source would silently ignore its signal.
///
/// This is also the seam for systemd: readiness, watchdog and socket activation hook in around ``run()``.
final class Daemon: @unchecked Sendable {
    private let server: Server
    private let logger: Logger
    private let queue = DispatchQueue(label: "subd.signals")
    private var signalSources: [DispatchSourceSignal] = []
    private var stopRequested = false
    private var drained = false
    private var stopped: CheckedContinuation<Void, Never>?

    init(server: Server, logger: Logger) {
        self.server = server
        self.logger = logger
    }

    /// Starts serving and returns once a SIGTERM/SIGINT drain has finished. Throws if a listener cannot start.
    /// Signals are caught before the first listener opens, so a signal right after start-up is never fatal.
    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        queue.sync { installSignalHandlers() }
        let addresses = try server.start()
        logger.info("subd \(SubdVersion.current) ready", metadata: ["listeners": "\(addresses.count)"])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.sync {
                if drained { continuation.resume() } else { stopped = continuation }
            }
        }
    }

    private func installSignalHandlers() {
        for number in [SIGTERM, SIGINT] {
            // SIG_IGN first (the usual libdispatch pattern) would drop a signal arriving before the source is armed.
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [weak self] in self?.stop(signal: number) }
            source.resume()
            signalSources.append(source)
        }
    }

    private func stop(signal number: Int32) {
        guard !stopRequested else { return }
        stopRequested = true
        logger.info("signal \(number == SIGTERM ? "SIGTERM" : "SIGINT"): draining connections")
        server.shutdown { [self] in
            queue.async {
                self.logger.info("stopped")
                self.drained = true
                self.stopped?.resume()
                self.stopped = nil
            }
        }
    }
}
