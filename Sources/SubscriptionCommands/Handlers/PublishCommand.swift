import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// `PUB` and `SEND`: the center fans the publication out, made (its `MSG` frame encoded once) as soon as one
/// session will receive it, or always for a retained number, whose next revision it carries (`rev=`) and whose
/// current value it becomes; the reply is how many sessions it was queued for.
///
/// - With a state directory, a retained number's value is staged instead
///   (``CommandEnvironment/stage(_:payload:info:sender:)``): saved at the end of the turn, and only then made
///   current, delivered and answered.
/// - With `cluster:` a shared retained number's publication goes through the cluster's retained bucket first
///   (``CommandEnvironment/publishShared(_:payload:info:sender:)``); a plain number's publication is also sent once to
///   the other nodes after the local fan-out (``CommandEnvironment/send(_:sender:info:payload:in:)``), and with
///   `ack: all` the reply waits for their receivers (``CommandEnvironment/reply(to:)``). A number this node does not
///   know is looked up in the shared bucket first (``CommandEnvironment/lookUp(_:notFound:retry:)``; `lookUp: false`
///   is the run after that lookup).
public enum PublishCommand {
    /// Runs `PUB number` (with `info`) or `SEND number` (without).
    @inlinable
    public static func run<Environment: CommandEnvironment>(
        _ number: String, payload: ArraySlice<UInt8>, info: [InfoPair], client: inout ClientState,
        center: SubscriptionCenter<Publication>, environment: Environment, lookUp: Bool = true
    ) throws(ProtocolError) -> Reply {
        let sender = client.name
        if let staged = try environment.stage(number, payload: payload, info: info, sender: sender) { return staged }
        if let shared = environment.publishShared(number, payload: payload, info: info, sender: sender) {
            return shared
        }
        let delivery: Delivery
        do {
            delivery = try environment.send(number, sender: sender, info: info, payload: payload, in: center)
        } catch {
            return try environment.lookUpOrThrow(error, number, lookUp: lookUp) {
                // The payload is a slice of the session's read buffer, which the commands behind this one reuse.
                let kept = ArraySlice(Array(payload))
                return { client, center, environment throws(ProtocolError) in
                    try run(
                        number, payload: kept, info: info, client: &client, center: center, environment: environment,
                        lookUp: false)
                }
            }
        }
        environment.countPublished(to: number, receivers: delivery.receivers)
        return environment.reply(to: delivery)
    }
}
