import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// `PUB` and `SEND`: the center fans the publication out, made (its `MSG` frame encoded once) as soon as one
/// session will receive it, or always for a retained number, whose next revision it carries (`rev=`) and whose
/// current value it becomes; the reply is how many sessions it was queued for.
enum PublishCommand {
    static func run(
        _ number: String, payload: ArraySlice<UInt8>, info: [InfoPair], _ context: CommandContext
    ) throws(ProtocolError) -> Reply {
        let sender = context.session.name
        // Framed only when some session will receive it.
        let receivers = try context.inCenter { center throws(CenterError) in
            try center.send(to: number, from: sender) { (revision: UInt64?) in
                payload.withUnsafeBytes {
                    Publication.make(number: number, sender: sender, revision: revision, info: info, payload: $0)
                }
            }
        }
        context.server.stats.messagesPublished += 1
        context.server.stats.messagesDelivered += UInt64(receivers)
        context.server.numberCounters.published(to: number)
        return .count(receivers)
    }
}
