import SubscriptionCenter
import SubscriptionProtocol

/// `SUB <pattern> [from=<client-name>] [group=<group-name>]`: subscribes the session (the same pattern again
/// replaces its filter and group), then pushes the current value of every matching retained number, in byte order,
/// before the `+OK`.
enum SubscribeCommand {
    static func run(
        _ pattern: String, from: String?, group: String?, _ context: CommandContext
    ) throws(ProtocolError) -> Reply {
        try context.inCenter { center throws(CenterError) in
            try center.add(context.session, to: pattern, from: from, group: group)
        }
        for (_, slot) in context.center.retainedValues(matching: pattern, from: from) {
            if let value = slot.value { context.session.push(value) }
        }
        return .ok()
    }
}
