import SubscriptionCenter
import SubscriptionProtocol

/// `SUB <pattern> [from=<client-name>] [group=<group-name>]`: subscribes the session (the same pattern again
/// replaces its filter and group), then pushes the current value of every matching retained number, in byte order,
/// before the `+OK`. When those values would not fit under `max_pending` with what the session already has queued,
/// it answers `-ERR LIMIT` and subscribes nothing (rather than cutting the session off as a slow consumer for
/// asking).
enum SubscribeCommand {
    static func run(
        _ pattern: String, from: String?, group: String?, _ context: CommandContext
    ) throws(ProtocolError) -> Reply {
        let values = context.center.retainedValues(matching: pattern, from: from).compactMap(\.slot.value)
        if !values.isEmpty {
            let bytes = values.reduce(0) { $0 + $1.heldBytes }
            let session = context.session
            guard session.output.heldBytes + bytes <= session.maxPending else {
                throw ProtocolError(
                    .limit, "the current values of '\(pattern)' hold \(bytes) bytes, more than max_pending "
                        + "(\(session.maxPending)) lets this session queue; subscribe to a narrower pattern")
            }
        }
        let isNew = try context.inCenter { center throws(CenterError) in
            try center.add(context.session, to: pattern, from: from, group: group)
        }
        if isNew { context.server.clusterInterestAdded(pattern) }
        for value in values { context.session.push(value) }
        return .ok()
    }
}
