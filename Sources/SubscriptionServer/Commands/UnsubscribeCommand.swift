import SubscriptionCenter
import SubscriptionProtocol

/// `UNSUB <pattern>`: `+OK`, also when the session was not subscribed to it.
enum UnsubscribeCommand {
    static func run(_ pattern: String, _ context: CommandContext) -> Reply {
        // The server is taken from the context once: each `context.server.…` access retains and releases it.
        let server = context.server
        if server.center.remove(context.session, from: pattern) { server.clusterInterestRemoved(pattern) }
        return .ok()
    }
}
