import SubscriptionCenter
import SubscriptionProtocol

/// `REMOVE <number>`: every exact subscriber is told `GONE` (through the center), and the reply counts them. With a
/// state directory the removal is on disk before the number goes.
///
/// With `cluster:` (docs/CLUSTER.md) the number is deleted from the shared numbers bucket first (the session is held
/// meanwhile; `NOTFOUND` when the bucket has no such number); every node then removes it and tells its own exact
/// subscribers `GONE`. The reply counts this node's subscribers only.
enum RemoveCommand {
    static func run(_ number: String, _ context: CommandContext) throws(ProtocolError) -> Reply {
        if let cluster = context.server.cluster { return runClustered(number, cluster, context) }
        try context.server.saveRemoved(number)
        let told = try context.inCenter { center throws(CenterError) in try center.remove(number) }
        context.server.post(
            .numberRemoved,
            JSONObject(
                [("number", .string(number)), ("subscribers_told", .integer(Int64(told.count)))]
                    + context.server.identity(of: context.session)))
        return .ok("removed \(told.count)")
    }

    /// The clustered form: the bucket removes, then this node does (the bridge counts its subscribers told).
    private static func runClustered(_ number: String, _ cluster: any ClusterLink, _ context: CommandContext) -> Reply {
        context.replyLater { answer in
            cluster.remove(number) { answer($0.map { .ok("removed \($0)") }) }
        }
    }
}
