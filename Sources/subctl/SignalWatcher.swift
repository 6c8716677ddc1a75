import Dispatch
@preconcurrency import Glibc

/// Receives SIGINT/SIGTERM through Dispatch signal sources on its own queue (never the main actor) and runs
/// the action given to ``onSignal(_:)``; before one is given, a signal exits the process with status 0.
/// Keep the watcher alive as long as the signals should be caught.
final class SignalWatcher: @unchecked Sendable {
    private let queue = DispatchQueue(label: "subctl.signals")
    /// Strong references: a source that is released stops delivering.
    private var sources: [any DispatchSourceSignal] = []
    /// Touched only on `queue`.
    private var action: (@Sendable () -> Void)?

    /// Stops the default action of `signals` (terminating the process) and watches them instead.
    init(signals: [Int32]) {
        for number in signals {
            _ = signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [self] in fire() }
            source.resume()
            sources.append(source)
        }
    }

    /// Runs `action` on every later signal (and at once if a signal came already).
    func onSignal(_ action: @escaping @Sendable () -> Void) {
        queue.async { [self] in self.action = action }
    }

    private func fire() {
        guard let action else {
            fflush(stdout)
            exit(0)
        }
        action()
    }
}
