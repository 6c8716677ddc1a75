import SubscriptionClient

/// How `listen` (and, later, other long-running commands) go on after losing the server, as `nats sub` and
/// `mosquitto_sub` do: wait, connect again, subscribe again. The waits double from ``firstDelay`` to ``longestDelay``
/// and start again from the first after a connection that worked. Messages published while no connection is up are
/// not received (the protocol delivers at most once, to the sessions that are subscribed when a message is sent).
struct Reconnection {
    /// The wait before the first attempt after a loss.
    static let firstDelay = Duration.milliseconds(100)
    /// The longest wait between two attempts.
    static let longestDelay = Duration.seconds(2)

    private var delay = Reconnection.firstDelay

    /// True for the errors after which trying again can help: the server could not be reached, or the connection
    /// broke. A refusal (`-ERR`) or a usage error is final.
    static func isLoss(_ error: ClientError) -> Bool {
        switch error {
        case .connectFailed, .connectionLost, .protocolViolation: return true
        default: return false
        }
    }

    /// True for the server's `NOTFOUND`.
    static func isNotFound(_ error: ClientError) -> Bool {
        if case .server(.notFound, _) = error { return true }
        return false
    }

    /// Waits before the next attempt (longer each time); false when the task was cancelled (Ctrl-C) meanwhile.
    mutating func wait() async -> Bool {
        let now = delay
        delay = min(delay * 2, Self.longestDelay)
        do {
            try await Task.sleep(for: now)
            return true
        } catch {
            return false
        }
    }

    /// A connection worked: the next loss waits ``firstDelay`` again.
    mutating func connected() {
        delay = Self.firstDelay
    }
}
