/// The per-origin dedupe of publications from other nodes (docs/CLUSTER.md, "The message path", step 2).
///
/// A node whose subscriptions overlap (`SCIENCE.>` and `SCIENCE.physics`) gets one NATS copy per matching
/// subscription. One origin's publications reach a node in order, each with a rising counter, so the node keeps the
/// last counter it accepted per origin and drops a copy whose counter is not above it; copies of other origins may
/// come in between.
///
/// The origin of the last publication accepted is kept apart, with its counter: a batch's publications (one origin's,
/// one after the other) are then compared with it, not looked up by their origin's hash each.
struct OriginCounters {
    /// The last counter accepted per origin id, but for ``recent``'s.
    private var last: [String: UInt64] = [:]
    /// The origin seen last and its last counter accepted (0: none yet; counters start at 1).
    private var recent: (origin: String, counter: UInt64)?

    /// True when the publication `counter` of `origin` is new (and remembers it); false for a copy of one accepted.
    mutating func accept(origin: String, counter: UInt64) -> Bool {
        if recent?.origin != origin {
            if let recent { last[recent.origin] = recent.counter }
            recent = (origin, last.removeValue(forKey: origin) ?? 0)
        }
        guard counter > recent!.counter else { return false }
        recent!.counter = counter
        return true
    }
}
