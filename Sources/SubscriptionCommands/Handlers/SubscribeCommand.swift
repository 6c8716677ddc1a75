import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// `SUB <pattern> [from=<client-name>] [group=<group-name>]`: subscribes the session (the same pattern again
/// replaces its filter and group), then pushes the current value of every matching retained number, in byte order,
/// before the `+OK`. When those values would not fit under `max_pending` with what the session already has queued,
/// it answers `-ERR LIMIT` and subscribes nothing (rather than cutting the session off as a slow consumer for
/// asking).
///
/// With `cluster:`, an exact number this node does not know is looked up in the shared bucket first
/// (``CommandEnvironment/lookUp(_:notFound:retry:)``; `lookUp: false` is the run after that lookup), and the
/// interest upstream follows the subscription (``CommandEnvironment/subscribe(_:from:group:in:)``); a pattern that
/// matches a retained number here answers `-ERR LIMIT` until the node caught up with the cluster's buckets
/// (``CommandEnvironment/requireCaughtUp(_:in:)``).
public enum SubscribeCommand {
    /// Runs `SUB pattern [from=] [group=]`.
    @inlinable
    public static func run<Environment: CommandEnvironment>(
        _ pattern: String, from: String?, group: String?, client: inout ClientState,
        center: SubscriptionCenter<Publication>, environment: Environment, lookUp: Bool = true
    ) throws(ProtocolError) -> Reply {
        try environment.requireCaughtUp(pattern, in: center)
        let values = center.retainedValues(matching: pattern, from: from).compactMap(\.slot.value)
        if !values.isEmpty {
            let bytes = values.reduce(0) { $0 + $1.heldBytes }
            let maxPending = environment.maxPending
            guard environment.queuedBytes + bytes <= maxPending else {
                throw ProtocolError(
                    .limit,
                    "the current values of '\(pattern)' hold \(bytes) bytes, more than max_pending "
                        + "(\(maxPending)) lets this session queue; subscribe to a narrower pattern")
            }
        }
        do {
            try environment.subscribe(pattern, from: from, group: group, in: center)
        } catch {
            return try environment.lookUpOrThrow(error, pattern, lookUp: lookUp) {
                { client, center, environment throws(ProtocolError) in
                    try run(
                        pattern, from: from, group: group, client: &client, center: center, environment: environment,
                        lookUp: false)
                }
            }
        }
        for value in values { environment.push(value) }
        return .ok()
    }
}
