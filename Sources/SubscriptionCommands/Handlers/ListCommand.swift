import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// `LIST [<pattern> [kind]]`: the existing numbers that match (for a user's session, those it may subscribe to),
/// sorted by their bytes, each with how many sessions a message to it would reach; with `kind`, then `plain` or
/// `retained <rev>` (a 1.0 client, which never sends `kind`, sees the contract's two words per line).
public enum ListCommand {
    /// Runs `LIST [pattern [kind]]`.
    @inlinable
    public static func run<Environment: CommandEnvironment>(
        _ pattern: String?, kinds: Bool, client: inout ClientState, center: SubscriptionCenter<Publication>,
        environment: Environment
    ) throws(ProtocolError) -> Reply {
        var numbers = try ProtocolError.fromCenter { () throws(CenterError) in
            try center.list(matching: pattern ?? ">")
        }
        // A user sees only the numbers it may subscribe to.
        if let rights = client.rights { numbers.removeAll { !rights.maySubscribe(to: $0.number) } }
        return .list(
            numbers.map { info in
                guard kinds else { return "\(info.number) \(info.subscribers)" }
                let kind = info.retainedRevision.map { "retained \($0)" } ?? "plain"
                return "\(info.number) \(info.subscribers) \(kind)"
            })
    }
}
