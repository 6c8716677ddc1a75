import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// `CREATE <number> [retain]`: `+OK created`, or `+OK exists` when it was there already (it keeps its kind). With
/// a state directory the new number is on disk before the `+OK`; a new number is told on `$SYS.number.created`.
///
/// With `cluster:` (docs/CLUSTER.md) the shared numbers bucket decides
/// (``CommandEnvironment/createShared(_:retained:)``): the session is held while the bucket creates the number (`+OK
/// created` when this create won, `+OK exists` when the number was there), then the number exists here too, with the
/// kind the bucket has.
public enum CreateCommand {
    /// Runs `CREATE number [retain]`.
    @inlinable
    public static func run<Environment: CommandEnvironment>(
        _ number: String, retained: Bool, client: inout ClientState, center: SubscriptionCenter<Publication>,
        environment: Environment
    ) throws(ProtocolError) -> Reply {
        if let shared = environment.createShared(number, retained: retained) { return shared }
        let created = try ProtocolError.fromCenter { () throws(CenterError) in
            try center.create(number, retained: retained)
        }
        if created {
            try environment.saveCreated(number, retained: retained)
            environment.post(.numberCreated(number: number, retained: retained), by: client)
        }
        return .ok(created ? "created" : "exists")
    }
}
