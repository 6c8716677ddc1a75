import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// `QUIT`: `+OK bye`, then the session closes gracefully (the reply is flushed first).
public enum QuitCommand {
    /// Runs `QUIT`.
    @inlinable
    public static func run<Environment: CommandEnvironment>(
        client: inout ClientState, center: SubscriptionCenter<Publication>, environment: Environment
    ) -> Reply {
        environment.close(.quit)
        return .ok("bye")
    }
}
