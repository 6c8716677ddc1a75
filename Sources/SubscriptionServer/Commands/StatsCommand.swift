import SubscriptionProtocol

/// `STATS`: the daemon's counters, `key value` lines (the keys are listed in docs/PROTOCOL.md).
enum StatsCommand {
    static func run(_ context: CommandContext) -> Reply {
        .list(context.server.currentStats().lines(uptime: ContinuousClock.now - context.server.startedAt))
    }
}
