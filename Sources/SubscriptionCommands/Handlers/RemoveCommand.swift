import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// `REMOVE <number>`: every exact subscriber is told `GONE` (through the center), and the reply counts them. With a
/// state directory the removal is on disk before the number goes; the removal is told on `$SYS.number.removed`.
///
/// With `cluster:` (docs/CLUSTER.md) the number is deleted from the shared numbers bucket first
/// (``CommandEnvironment/removeShared(_:)``: the session is held meanwhile; `NOTFOUND` when the bucket has no such
/// number); every node then removes it and tells its own exact subscribers `GONE`. The reply counts this node's
/// subscribers only.
public enum RemoveCommand {
    /// Runs `REMOVE number`.
    @inlinable
    public static func run<Environment: CommandEnvironment>(
        _ number: String, client: inout ClientState, center: SubscriptionCenter<Publication>,
        environment: Environment
    ) throws(ProtocolError) -> Reply {
        if let shared = environment.removeShared(number) { return shared }
        try environment.saveRemoved(number)
        let told = try ProtocolError.fromCenter { () throws(CenterError) in try center.remove(number) }
        environment.post(.numberRemoved(number: number, subscribersTold: told.count), by: client)
        return .ok("removed \(told.count)")
    }
}
