import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// `GET <number>`: a retained number's current value as a `MSG` push (with `rev=`), then `+OK <rev>`; `+OK 0` and no
/// push before the first message. A plain number is `-ERR PROTO`.
public enum GetCommand {
    /// Runs `GET number`.
    @inlinable
    public static func run<Environment: CommandEnvironment>(
        _ number: String, client: inout ClientState, center: SubscriptionCenter<Publication>,
        environment: Environment
    ) throws(ProtocolError) -> Reply {
        let slot = try ProtocolError.fromCenter { () throws(CenterError) in try center.retainedSlot(of: number) }
        guard let slot else {
            throw ProtocolError(.proto, "'\(number)' is not a retained number (CREATE \(number) retain makes one)")
        }
        if let value = slot.value { environment.push(value) }
        return .count(Int(slot.revision))
    }
}
