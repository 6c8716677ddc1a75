import SubscriptionCenter
import SubscriptionProtocol

/// `REMOVE <number>`: every exact subscriber is told `GONE` (through the center), and the reply counts them. With a
/// state directory the removal is on disk before the number goes.
enum RemoveCommand {
    static func run(_ number: String, _ context: CommandContext) throws(ProtocolError) -> Reply {
        try context.server.saveRemoved(number)
        let told = try context.inCenter { center throws(CenterError) in try center.remove(number) }
        context.server.post(.numberRemoved, JSONObject(
            [("number", .string(number)), ("subscribers_told", .integer(Int64(told.count)))]
                + context.server.identity(of: context.session)))
        return .ok("removed \(told.count)")
    }
}
