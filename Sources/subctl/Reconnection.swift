import SubscriptionClient

/// How `listen` and `watch` go on after losing the server, as `nats sub` and `mosquitto_sub` do: say so on stderr,
/// wait, connect again, subscribe again. The waits double from ``firstDelay`` to ``longestDelay`` and start again from
/// the first once subscribed. After a loss, a number that is not there (a subd restarted without its state) is waited
/// for the same way, with one line saying so. Messages published while no subscription is up are not received (the
/// protocol delivers at most once, to the sessions subscribed when a message is sent).
struct Reconnection {
    /// The wait before the first attempt after a loss.
    static let firstDelay = Duration.milliseconds(100)
    /// The longest wait between two attempts.
    static let longestDelay = Duration.seconds(2)

    /// Where the command connects, for its stderr lines.
    let endpoint: Endpoint
    /// False with `--no-reconnect`: a loss ends the command.
    let isEnabled: Bool

    private var delay = Reconnection.firstDelay
    /// Between a loss and the next subscription.
    private var isReconnecting = false
    /// The "not there" line was said since the loss.
    private var saidMissing = false

    init(endpoint: Endpoint, isEnabled: Bool) {
        self.endpoint = endpoint
        self.isEnabled = isEnabled
    }

    /// After connecting or subscribing failed with `error`: true when the command should try again (the wait is
    /// over), false when the error ends it (or Ctrl-C came during the wait: `Task.isCancelled`). Only after a loss is
    /// anything tried again; `missing` names the number a `NOTFOUND` is about.
    mutating func retry(after error: ClientError, missing: () async -> String?) async -> Bool {
        guard isReconnecting else { return false }
        if case .notFound = error {
            if !saidMissing {
                let name = await missing().map { "'\($0)'" } ?? "a number"
                Report.error("reconnected to \(endpoint), but \(name) is not there; trying again until it is")
                saidMissing = true
            }
        } else if !Self.isLoss(error) {
            return false
        }
        return await wait()
    }

    /// Subscribed: says so when it was a reconnection, and the next loss waits ``firstDelay`` again.
    mutating func subscribed() {
        if isReconnecting { Report.error("reconnected to \(endpoint)") }
        isReconnecting = false
        saidMissing = false
        delay = Self.firstDelay
    }

    /// The subscription ended with `error`: true when the command should connect again (it said so on stderr, closed
    /// `client` and waited), false when the error ends it.
    mutating func lost(_ error: ClientError, closing client: SubscriptionClient) async -> Bool {
        guard isEnabled, Self.isLoss(error) else { return false }
        Report.error("lost the connection to \(endpoint); reconnecting (--no-reconnect to stop instead)")
        isReconnecting = true
        await client.close()
        return await wait()
    }

    /// True for the errors after which trying again can help: the server could not be reached, or the connection
    /// broke. A refusal (`-ERR`) or a usage error is final.
    static func isLoss(_ error: ClientError) -> Bool {
        switch error {
        case .connectFailed, .connectionLost, .protocolViolation: return true
        default: return false
        }
    }

    /// Waits before the next attempt (longer each time); false when the task was cancelled (Ctrl-C) meanwhile.
    private mutating func wait() async -> Bool {
        let now = delay
        delay = min(delay * 2, Self.longestDelay)
        do {
            try await Task.sleep(for: now)
            return true
        } catch {
            return false
        }
    }
}
