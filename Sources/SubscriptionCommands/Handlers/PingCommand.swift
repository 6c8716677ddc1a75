import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// `PING [<text>]`: `+PONG`, or `+PONG <text>`; allowed before authentication.
public enum PingCommand {
    /// Runs `PING [text]`.
    @inlinable
    public static func run<Environment: CommandEnvironment>(
        _ text: String?, client: inout ClientState, center: SubscriptionCenter<Publication>, environment: Environment
    ) -> Reply {
        .pong(text)
    }
}
