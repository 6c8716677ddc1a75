/// The per-origin dedupe of publications from other nodes (docs/CLUSTER.md, "The message path", step 2).
///
/// A node whose subscriptions overlap (`SCIENCE.>` and `SCIENCE.physics`) gets one NATS copy per matching
/// subscription. One origin's publications reach a node in order, each with a rising counter, so the node keeps the
/// last counter it accepted per origin and drops a copy whose counter is not above it; copies of other origins may
/// come in between.
struct OriginCounters {
    /// The last counter accepted per origin id.
    private var last: [String: UInt64] = [:]

    /// True when the publication `counter` of `origin` is new (and remembers it); false for a copy of one accepted.
    mutating func accept(origin: String, counter: UInt64) -> Bool {
        if let seen = last[origin], counter <= seen { return false }
        last[origin] = counter
        return true
    }
}
