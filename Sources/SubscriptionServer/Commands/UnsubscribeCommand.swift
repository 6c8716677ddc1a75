import SubscriptionCenter
import SubscriptionProtocol

/// `UNSUB <pattern>`: `+OK`, also when the session was not subscribed to it.
enum UnsubscribeCommand {
    static func run(_ pattern: String, _ context: CommandContext) -> Reply {
        // A stored flag read through the context costs nothing; a call on the server would retain and release it.
        guard context.server.isClustered else {
            context.center.remove(context.session, from: pattern)
            return .ok()
        }
        // With `cluster:`, the interest upstream is the subscription's: its pattern, in its group or in none.
        if let ended = context.center.subscription(of: context.session, to: pattern),
            context.center.remove(context.session, from: pattern)
        {
            context.server.clusterInterestRemoved(pattern, group: ended.group)
        }
        return .ok()
    }
}
