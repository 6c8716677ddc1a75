#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Logging
import SubscriptionServer

/// Runs the server as a process: signals in, exit status out.
///
/// A plain nonisolated class that owns its own serial queue: Dispatch sources made in `@MainActor` context
/// (top-level code) crash on their first event under Swift 6 on Linux, so they are made here. Signals arrive
/// through a ``SignalPipe``, kept in a stored property.
///
/// This is also the seam for systemd: readiness, watchdog and socket activation hook in around ``run()``.
final class Daemon: @unchecked Sendable {
    private let server: Server
    private let logger: Logger
    private let queue = DispatchQueue(label: "subd.signals")
    private let signals: SignalPipe
    private var stopRequested = false
    private var drained = false
    private var stopped: CheckedContinuation<Void, Never>?

    /// `signals` must have been made at the very start of the process, so no signal is missed.
    init(server: Server, logger: Logger, signals: SignalPipe) {
        self.server = server
        self.logger = logger
        self.signals = signals
    }

    /// Starts serving and returns once a SIGTERM/SIGINT drain has finished. Throws if a listener cannot start.
    /// Signals are caught before the first listener opens, so a signal right after start-up is never fatal.
    func run() async throws {
        signal(SIGPIPE, SIG_IGN)
        signals.start(on: queue) { [weak self] number in self?.stop(signal: number) }
        let addresses = try server.start()
        logger.info("subd \(SubdVersion.current) ready", metadata: ["listeners": "\(addresses.count)"])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.sync {
                if drained { continuation.resume() } else { stopped = continuation }
            }
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
