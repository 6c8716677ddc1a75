import SubscriptionCenter
import SubscriptionProtocol

/// `UNSUB <pattern>`: `+OK`, also when the session was not subscribed to it.
enum UnsubscribeCommand {
    static func run(_ pattern: String, _ context: CommandContext) -> Reply {
        if context.center.remove(context.session, from: pattern) { context.server.clusterInterestRemoved(pattern) }
        return .ok()
    }
}
