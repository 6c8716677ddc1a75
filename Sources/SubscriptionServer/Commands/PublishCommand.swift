import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// `PUB` and `SEND`: the publication is made (its `MSG` frame encoded once) and the center fans it out; the reply
/// is how many sessions it was queued for.
enum PublishCommand {
    static func run(
        _ number: String, payload: ArraySlice<UInt8>, info: [InfoPair], _ context: CommandContext
    ) throws(ProtocolError) -> Reply {
        let sender = context.session.name
        let publication = payload.withUnsafeBytes {
            Publication.make(number: number, sender: sender, info: info, payload: $0)
        }
        let receivers = try context.inCenter { center throws(CenterError) in
            try center.send(publication, to: number, from: sender)
        }
        context.server.stats.messagesPublished += 1
        context.server.stats.messagesDelivered += UInt64(receivers)
        return .count(receivers)
    }
}
