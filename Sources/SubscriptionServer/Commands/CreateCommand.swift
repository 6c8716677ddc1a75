import SubscriptionCenter
import SubscriptionProtocol

/// `CREATE <number>`: `+OK created`, or `+OK exists` when it was there already.
enum CreateCommand {
    static func run(_ number: String, _ context: CommandContext) throws(ProtocolError) -> Reply {
        let created = try context.inCenter { center throws(CenterError) in try center.create(number) }
        return .ok(created ? "created" : "exists")
    }
}
