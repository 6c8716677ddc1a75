import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// `UNSUB <pattern>`: `+OK`, also when the session was not subscribed to it. With `cluster:` the interest upstream
/// ends with the subscription (``CommandEnvironment/unsubscribe(_:in:)``).
public enum UnsubscribeCommand {
    /// Runs `UNSUB pattern`.
    @inlinable
    public static func run<Environment: CommandEnvironment>(
        _ pattern: String, client: inout ClientState, center: SubscriptionCenter<Publication>,
        environment: Environment
    ) -> Reply {
        environment.unsubscribe(pattern, in: center)
        return .ok()
    }
}
