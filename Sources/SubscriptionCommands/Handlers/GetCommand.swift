import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// `GET <number>`: a retained number's current value as a `MSG` push (with `rev=`), then `+OK <rev>`; `+OK 0` and no
/// push before the first message. A plain number is `-ERR PROTO`.
///
/// With `cluster:`, a number this node does not know is looked up in the shared bucket first (`lookUp: false` is the
/// run after that lookup), and a retained number's value is answered only once this node caught up with the
/// cluster's buckets (``CommandEnvironment/requireCaughtUp(_:in:)``; `-ERR LIMIT` before).
public enum GetCommand {
    /// Runs `GET number`.
    @inlinable
    public static func run<Environment: CommandEnvironment>(
        _ number: String, client: inout ClientState, center: SubscriptionCenter<Publication>,
        environment: Environment, lookUp: Bool = true
    ) throws(ProtocolError) -> Reply {
        let slot: RetainedSlot<Publication>?
        do {
            slot = try center.retainedSlot(of: number)
        } catch {
            return try environment.lookUpOrThrow(error, number, lookUp: lookUp) {
                { client, center, environment throws(ProtocolError) in
                    try run(number, client: &client, center: center, environment: environment, lookUp: false)
                }
            }
        }
        guard let slot else {
            throw ProtocolError(.proto, "'\(number)' is not a retained number (CREATE \(number) retain makes one)")
        }
        try environment.requireCaughtUp(number, in: center)
        if let value = slot.value { environment.push(value) }
        return .count(Int(slot.revision))
    }
}
