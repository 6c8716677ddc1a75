import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// `STATS`: the daemon's counters, `key value` lines (the keys are listed in docs/PROTOCOL.md).
public enum StatsCommand {
    /// Runs `STATS`.
    @inlinable
    public static func run<Environment: CommandEnvironment>(
        client: inout ClientState, center: SubscriptionCenter<Publication>, environment: Environment
    ) -> Reply {
        .list(environment.statsLines())
    }
}
