import SubscriptionCenter
import SubscriptionProtocol

/// `CREATE <number> [retain]`: `+OK created`, or `+OK exists` when it was there already (it keeps its kind). With
/// a state directory the new number is on disk before the `+OK`.
///
/// With `cluster:` (docs/CLUSTER.md) the shared numbers bucket decides: the session is held while the bucket creates
/// the number (`+OK created` when this create won, `+OK exists` when the number was there), then the number exists
/// here too, with the kind the bucket has (a retained number's values are shared too, see
/// `Server+ClusterRetained.swift`).
enum CreateCommand {
    static func run(_ number: String, retained: Bool, _ context: CommandContext) throws(ProtocolError) -> Reply {
        if let cluster = context.server.cluster {
            return runClustered(number, retained: retained, cluster, context)
        }
        let created = try context.inCenter { center throws(CenterError) in
            try center.create(number, retained: retained)
        }
        if created {
            try context.server.saveCreated(number, retained: retained)
            context.server.post(
                .numberCreated,
                JSONObject(
                    [("number", .string(number)), ("kind", .string(retained ? "retained" : "plain"))]
                        + context.server.identity(of: context.session)))
        }
        return .ok(created ? "created" : "exists")
    }

    /// The clustered form: the bucket decides, the reply follows its answer. (The parser has checked the name.)
    private static func runClustered(
        _ number: String, retained: Bool, _ cluster: any ClusterLink, _ context: CommandContext
    ) -> Reply {
        context.replyLater { answer in
            cluster.create(number, retained: retained) { answer($0.map { .ok($0 ? "created" : "exists") }) }
        }
    }
}
