import SubscriptionProtocol

/// `QUIT`: `+OK bye`, then the session closes gracefully (the reply is flushed first).
enum QuitCommand {
    static func run(_ context: CommandContext) -> Reply {
        context.session.requestClose(.client)
        return .ok("bye")
    }
}
