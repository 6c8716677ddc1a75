import CSystemd
import SubscriptionSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Tells the service manager how subd is doing, through sd_notify(3): readiness, reloads, the stop, a status line
/// and watchdog pings.
///
/// Every call is a cheap no-op when `NOTIFY_SOCKET` is unset (subd not started by systemd as `Type=notify`), so the
/// daemon calls it unconditionally. The environment is left as it is: subd starts no children.
struct SystemdNotifier: Sendable {
    /// True when a service manager listens (`NOTIFY_SOCKET` is set).
    let isEnabled = getenv("NOTIFY_SOCKET") != nil

    /// Sends newline-separated `VARIABLE=value` assignments in one datagram; false when it could not be sent.
    @discardableResult
    func notify(_ assignments: String...) -> Bool {
        guard isEnabled else { return false }
        return sd_notify(0, assignments.joined(separator: "\n")) > 0
    }

    /// `READY=1` with a status line: every listener accepts and the configured numbers exist (also the end of a
    /// reload).
    @discardableResult
    func ready(status: String) -> Bool {
        notify("READY=1", "STATUS=\(status)")
    }

    /// `RELOADING=1` with the `MONOTONIC_USEC` systemd uses to tell this reload from an earlier one.
    func reloading(status: String) {
        notify("RELOADING=1", "MONOTONIC_USEC=\(MonotonicClock.nanoseconds() / 1_000)", "STATUS=\(status)")
    }

    /// `STOPPING=1`: the drain begins.
    func stopping(status: String) {
        notify("STOPPING=1", "STATUS=\(status)")
    }

    /// A new one-line status for `systemctl status`.
    func status(_ line: String) {
        notify("STATUS=\(line)")
    }

    /// One watchdog ping.
    func watchdog() {
        notify("WATCHDOG=1")
    }

    /// The watchdog interval in microseconds that systemd expects pings within (`WATCHDOG_USEC`, for this
    /// process), or nil when the watchdog is off.
    static func watchdogMicroseconds() -> Int? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return Int(clamping: microseconds)
    }
}
