import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// `CREATE <number> [retain]`: `+OK created`, or `+OK exists` when it was there already (it keeps its kind). With
/// a state directory the new number is on disk before the `+OK`.
///
/// With `cluster:` (docs/CLUSTER.md) the shared numbers bucket decides: the session is held while the bucket creates
/// the number (`+OK created` when this create won, `+OK exists` when the number was there), then the number exists
/// here too. Retained numbers are not shared yet: `CREATE <number> retain` is `-ERR DENIED` on a clustered node.
enum CreateCommand {
    static func run(_ number: String, retained: Bool, _ context: CommandContext) throws(ProtocolError) -> Reply {
        if let cluster = context.server.cluster {
            return try runClustered(number, retained: retained, cluster, context)
        }
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

    /// The clustered form: the name is checked here, the bucket decides, the reply follows its answer.
    private static func runClustered(
        _ number: String, retained: Bool, _ cluster: any ClusterLink, _ context: CommandContext
    ) throws(ProtocolError) -> Reply {
        do {
            try Names.checkNumber(number)
        } catch {
            throw ProtocolError(.name, "invalid name '\(number)': \(error)")
        }
        guard !retained else {
            throw ProtocolError(
                .denied, "retained numbers are not shared between cluster nodes yet: CREATE \(number) without retain")
        }
        let session = context.session
        let server = context.server
        session.hold()
        cluster.create(number) { result in
            guard session.machine.phase != .closed else { return }
            switch result {
            case .success(let created): session.queue(.ok(created ? "created" : "exists"))
            case .failure(let error): session.queueError(error)
            }
            session.release()
            server.loop.endOfTurn()
        }
        return .later
    }
}
