import SubscriptionCenter
import SubscriptionProtocol

/// `SUB <pattern> [from=<client-name>] [group=<group-name>]`: subscribes the session (the same pattern again
/// replaces its filter and group), then pushes the current value of every matching retained number, in byte order,
/// before the `+OK`. When those values would not fit under `max_pending` with what the session already has queued,
/// it answers `-ERR LIMIT` and subscribes nothing (rather than cutting the session off as a slow consumer for
/// asking).
enum SubscribeCommand {
    ///
    /// With `cluster:`, an exact number this node does not know is looked up in the shared bucket first
    /// (``Server/lookUpInCluster(_:for:notFound:retry:)``); `lookUp: false` is the run after that lookup.
    static func run(
        _ pattern: String, from: String?, group: String?, _ context: CommandContext, lookUp: Bool = true
    ) throws(ProtocolError) -> Reply {
        let values = context.center.retainedValues(matching: pattern, from: from).compactMap(\.slot.value)
        if !values.isEmpty {
            let bytes = values.reduce(0) { $0 + $1.heldBytes }
            let session = context.session
            guard session.output.heldBytes + bytes <= session.maxPending else {
                throw ProtocolError(
                    .limit,
                    "the current values of '\(pattern)' hold \(bytes) bytes, more than max_pending "
                        + "(\(session.maxPending)) lets this session queue; subscribe to a narrower pattern")
            }
        }
        let isNew: Bool
        // With `cluster:`, the group a replaced subscription had (its interest upstream moves when the group changes).
        let before = context.server.isClustered ? context.center.subscription(of: context.session, to: pattern) : nil
        do {
            isNew = try context.center.add(context.session, to: pattern, from: from, group: group)
        } catch {
            if case .notFound = error, lookUp,
                let later = context.server.lookUpInCluster(
                    pattern, for: context.session, notFound: ProtocolError(error),
                    retry: { context throws(ProtocolError) in
                        try run(pattern, from: from, group: group, context, lookUp: false)
                    })
            {
                return later
            }
            throw ProtocolError(error)
        }
        // A stored flag read through the context costs nothing; a call on the server would retain and release it.
        if context.server.isClustered {
            if isNew {
                context.server.clusterInterestAdded(pattern, group: group)
            } else if let before {
                context.server.clusterInterestMoved(pattern, from: before.group, to: group)
            }
        }
        for value in values { context.session.push(value) }
        return .ok()
    }
}
