import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// `PUB` and `SEND`: the center fans the publication out, made (its `MSG` frame encoded once) as soon as one
/// session will receive it, or always for a retained number, whose next revision it carries (`rev=`) and whose
/// current value it becomes; the reply is how many sessions it was queued for. With a state directory, a retained
/// number's value is staged instead (``Server/stage(_:payload:info:for:)``): saved at the end of the turn, and only
/// then made current, delivered and answered. With `cluster:` a plain number's publication is also sent once to
/// the other nodes (docs/CLUSTER.md), after the local fan-out; with `ack: all` the reply waits (the session held) for
/// the receivers the nodes with interest confirm, at most `ack_timeout`; with `ack: local` it counts this node's
/// sessions only. A shared retained number's publication goes through the cluster's retained bucket first
/// (``Server/publishRetainedInCluster(_:payload:info:_:)``), and its reply counts this node's sessions only. A number
/// this node does not know is looked up in the shared bucket first
/// (``Server/lookUpInCluster(_:for:notFound:retry:)``; `lookUp: false` is the run after that lookup).
enum PublishCommand {
    static func run(
        _ number: String, payload: ArraySlice<UInt8>, info: [InfoPair], _ context: CommandContext, lookUp: Bool = true
    ) throws(ProtocolError) -> Reply {
        // The server is taken from the context once: each `context.server.…` access retained and released it.
        let server = context.server
        if server.savesState, let staged = try server.stage(number, payload: payload, info: info, for: context.session)
        {
            return staged
        }
        if server.isClustered,
            let later = server.publishRetainedInCluster(number, payload: payload, info: info, context)
        {
            return later
        }
        let sender = context.session.name
        // Set when the reply waits for the other nodes' receivers (`ack: all`).
        var ticket: UInt64? = nil
        // Framed only when some session will receive it. (A closure written here, not a local function: debug builds
        // allocated a context for the function, one more allocation per PUB than the budget.)
        let receivers: Int
        do {
            if server.isClustered {
                receivers = try sendInCluster(
                    number, sender: sender, info: info, payload: payload, server: server, ticket: &ticket)
            } else {
                receivers = try server.center.send(to: number, from: sender) { (revision: UInt64?) in
                    payload.withUnsafeBytes {
                        Publication.make(number: number, sender: sender, revision: revision, info: info, payload: $0)
                    }
                }
            }
        } catch {
            if case .notFound = error, lookUp, server.cluster != nil {
                let kept = ArraySlice(Array(payload))
                if let later = server.lookUpInCluster(
                    number, for: context.session, notFound: ProtocolError(error),
                    retry: { context throws(ProtocolError) in
                        try run(number, payload: kept, info: info, context, lookUp: false)
                    })
                {
                    return later
                }
            }
            throw ProtocolError(error)
        }
        server.stats.messagesPublished += 1
        server.stats.messagesDelivered += UInt64(receivers)
        server.numberCounters.published(to: number)
        if let ticket, let cluster = server.cluster {
            // Held like a clustered CREATE: the commands behind wait, so replies keep their order.
            return context.replyLater { answer in
                cluster.confirmations(of: ticket) { remote in answer(.success(.count(receivers + remote))) }
            }
        }
        return .count(receivers)
    }

    /// With `cluster:`: the local fan-out, then, for a plain number, the publication to the other nodes, naming the
    /// queue groups served here (docs/CLUSTER.md, "The message path", step 3), with `ticket` set when the reply is to
    /// wait for the other nodes' receivers (step 4). A retained number this node alone holds stays here.
    private static func sendInCluster(
        _ number: String, sender: String?, info: [InfoPair], payload: ArraySlice<UInt8>, server: Server,
        ticket: inout UInt64?
    ) throws(CenterError) -> Int {
        var groupsMet: [String] = []
        var retainedRevision: UInt64? = nil
        let receivers = try server.center.send(to: number, from: sender, audience: .everyone, groupsMet: &groupsMet) {
            (revision: UInt64?) in
            retainedRevision = revision
            return payload.withUnsafeBytes {
                Publication.make(number: number, sender: sender, revision: revision, info: info, payload: $0)
            }
        }
        if retainedRevision == nil, let cluster = server.cluster {
            ticket = cluster.published(to: number, sender: sender, info: info, groups: groupsMet, payload: payload)
        }
        return receivers
    }
}
