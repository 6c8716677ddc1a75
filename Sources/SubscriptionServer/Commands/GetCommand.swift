import SubscriptionCenter
import SubscriptionProtocol

/// `GET <number>`: a retained number's current value as a `MSG` push (with `rev=`), then `+OK <rev>`; `+OK 0` and no
/// push before the first message. A plain number is `-ERR PROTO`.
enum GetCommand {
    static func run(_ number: String, _ context: CommandContext) throws(ProtocolError) -> Reply {
        let slot = try context.inCenter { center throws(CenterError) in try center.retainedSlot(of: number) }
        guard let slot else {
            throw ProtocolError(.proto, "'\(number)' is not a retained number (CREATE \(number) retain makes one)")
        }
        if let value = slot.value { context.session.push(value) }
        return .count(Int(slot.revision))
    }
}
