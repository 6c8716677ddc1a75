import SubscriptionCenter
import SubscriptionProtocol

/// `CREATE <number> [retain]`: `+OK created`, or `+OK exists` when it was there already (it keeps its kind). With
/// a state directory the new number is on disk before the `+OK`.
enum CreateCommand {
    static func run(_ number: String, retained: Bool, _ context: CommandContext) throws(ProtocolError) -> Reply {
        let created = try context.inCenter { center throws(CenterError) in
            try center.create(number, retained: retained)
        }
        if created {
            try context.server.saveCreated(number, retained: retained)
            context.server.post(.numberCreated, JSONObject(
                [("number", .string(number)), ("kind", .string(retained ? "retained" : "plain"))]
                    + context.server.identity(of: context.session)))
        }
        return .ok(created ? "created" : "exists")
    }
}
