import SubscriptionCenter
import SubscriptionProtocol

/// `SUB <pattern> [from=<client-name>]`: subscribes the session; the same pattern again replaces its filter.
enum SubscribeCommand {
    static func run(_ pattern: String, from: String?, _ context: CommandContext) throws(ProtocolError) -> Reply {
        try context.inCenter { center throws(CenterError) in try center.add(context.session, to: pattern, from: from) }
        return .ok()
    }
}
