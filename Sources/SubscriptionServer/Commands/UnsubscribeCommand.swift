import SubscriptionCenter
import SubscriptionProtocol

/// `UNSUB <pattern>`: `+OK`, also when the session was not subscribed to it.
enum UnsubscribeCommand {
    static func run(_ pattern: String, _ context: CommandContext) -> Reply {
        let removed = context.center.remove(context.session, from: pattern)
        // A stored flag read through the context costs nothing; a call on the server would retain and release it.
        if removed && context.server.isClustered { context.server.clusterInterestRemoved(pattern) }
        return .ok()
    }
}
