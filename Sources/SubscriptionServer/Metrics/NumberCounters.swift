import SubscriptionWire

/// Messages published per number, for the metrics' busiest numbers (`subd_number_messages_published_total`).
///
/// Kept by the server, beside the center (which knows nothing of it), and fed by one call per accepted `PUB` or
/// `SEND`. While metrics are off it only tests ``isEnabled``; while on, a number already counted costs one hash
/// lookup and no allocation. Its memory is bounded: at most ``capacity`` numbers are held, and when a new number
/// would pass that, the less busy half is forgotten (a forgotten number that is published again starts from 0: a
/// counter reset, which Prometheus's `rate()` allows for). Numbers that no longer exist are forgotten at each
/// scrape (``forget(where:)``). Numbers are counted by their bytes (``ExactName``), as the center keys them: `café` in
/// NFC and in NFD are two numbers with a count each. Confined to the server's queue, like the rest of its state.
struct NumberCounters {
    /// The most numbers `metrics_top_numbers` may ask for.
    static let maxShown = 1_000
    /// How many numbers are held at most, by default: a few times ``maxShown``, so the busiest ones survive each
    /// halving with room to spare.
    static let defaultCapacity = 4_096

    /// True while counting; false (metrics off, or `metrics_top_numbers: 0`) makes ``published(to:)`` a no-op and
    /// holds nothing.
    private(set) var isEnabled: Bool
    /// How many numbers are held at most.
    let capacity: Int
    /// Messages published to each number since it was first counted.
    private(set) var counts: [ExactName: UInt64] = [:]

    /// Counters that count when `enabled`; `capacity` (at least 2) bounds how many numbers are held.
    init(enabled: Bool, capacity: Int = NumberCounters.defaultCapacity) {
        precondition(capacity >= 2, "NumberCounters needs room for at least 2 numbers, got \(capacity)")
        self.isEnabled = enabled
        self.capacity = capacity
    }

    /// Counts one message published to `number` (a number that exists: the publish was accepted).
    @inline(__always)
    mutating func published(to number: String) {
        guard isEnabled else { return }
        if let index = counts.index(forKey: ExactName(number)) {
            counts.values[index] &+= 1
        } else {
            insert(number)
        }
    }

    /// Starts or stops counting; stopping forgets every count.
    mutating func setEnabled(_ enabled: Bool) {
        isEnabled = enabled
        if !enabled { counts = [:] }
    }

    /// Forgets the numbers for which `isGone` is true (those that were removed).
    mutating func forget(where isGone: (String) -> Bool) {
        counts = counts.filter { !isGone($0.key.string) }
    }

    /// The `limit` numbers with the most messages, most first; a tie goes to the number that sorts first by bytes.
    func busiest(_ limit: Int) -> [(number: String, published: UInt64)] {
        guard limit > 0 else { return [] }
        return counts.sorted(by: Self.busierFirst).prefix(limit).map { (number: $0.key.string, published: $0.value) }
    }

    // MARK: Private

    @inline(never)
    private mutating func insert(_ number: String) {
        if counts.count >= capacity { forgetLessBusyHalf() }
        counts[ExactName(number)] = 1
    }

    /// Keeps the busier half of ``capacity`` (amortized over the capacity / 2 new numbers that fit in again).
    private mutating func forgetLessBusyHalf() {
        let kept = counts.sorted(by: Self.busierFirst).prefix(capacity / 2)
        var smaller: [ExactName: UInt64] = [:]
        smaller.reserveCapacity(capacity)
        for (number, count) in kept { smaller[number] = count }
        counts = smaller
    }

    private static func busierFirst(_ a: (key: ExactName, value: UInt64), _ b: (key: ExactName, value: UInt64))
        -> Bool
    {
        a.value != b.value ? a.value > b.value : a.key < b.key
    }
}
