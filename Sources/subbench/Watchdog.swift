import Dispatch
import Foundation

/// Runs `onExpire` on its own thread unless disarmed within the given time.
final class Watchdog: Sendable {
    private let disarmed = DispatchSemaphore(value: 0)

    /// Arms the watchdog for `seconds`.
    init(seconds: Double, onExpire: @escaping @Sendable () -> Void) {
        let disarmed = disarmed
        let thread = Thread {
            if disarmed.wait(timeout: .now() + seconds) == .timedOut { onExpire() }
        }
        thread.name = "watchdog"
        thread.start()
    }

    /// Stops the watchdog; `onExpire` will not run after this returns unless it already started.
    func disarm() {
        disarmed.signal()
    }
}
