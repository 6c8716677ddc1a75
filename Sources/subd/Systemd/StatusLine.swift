import SubscriptionServer

/// The one-line summary systemd shows in `systemctl status subd` (`STATUS=`), with message rates since the
/// previous line:
///
///     3 connections, 2 numbers, 5 subscriptions; 120 msgs/s in, 1200 msgs/s out
struct StatusLine {
    private var previous: (published: UInt64, delivered: UInt64, at: ContinuousClock.Instant)?

    /// The line for `stats`, taken at `now`; rates are 0 on the first call.
    mutating func next(_ stats: ServerStats, now: ContinuousClock.Instant = .now) -> String {
        var perSecondIn = 0
        var perSecondOut = 0
        if let previous {
            let seconds = (now - previous.at) / .seconds(1)
            if seconds > 0 {
                perSecondIn = Int((Double(stats.messagesPublished &- previous.published) / seconds).rounded())
                perSecondOut = Int((Double(stats.messagesDelivered &- previous.delivered) / seconds).rounded())
            }
        }
        previous = (stats.messagesPublished, stats.messagesDelivered, now)
        return "\(Self.count(stats.connections, "connection")), \(Self.count(stats.numbers, "number")), "
            + "\(Self.count(stats.subscriptions, "subscription")); \(perSecondIn) msgs/s in, \(perSecondOut) msgs/s out"
    }

    /// `1 connection`, `2 connections`.
    static func count(_ value: Int, _ noun: String) -> String {
        value == 1 ? "1 \(noun)" : "\(value) \(noun)s"
    }
}
