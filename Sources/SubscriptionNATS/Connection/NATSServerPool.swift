/// The servers a client may use, the configured ones first and those INFO advertised (`connect_urls`) after them,
/// with each one's failures in a row and its last attempt, deciding which to try next and how long to wait.
struct NATSServerPool: Equatable {
    /// One server.
    struct Entry: Equatable {
        /// Where it is.
        var address: NATSServerAddress
        /// True when it was learned from INFO rather than configured.
        var isDiscovered: Bool
        /// Failed attempts since the last successful connection to it.
        var failures = 0
        /// When it was last tried (``MonotonicClock`` nanoseconds); nil: never.
        var lastAttempt: UInt64?
    }

    /// The servers, in the order they were given or learned.
    private(set) var entries: [Entry]
    /// The server tried last (the one connected, when connected).
    private(set) var current: Int?

    /// A pool of configured servers.
    init(_ servers: [NATSServerAddress]) {
        entries = servers.map { Entry(address: $0, isDiscovered: false) }
    }

    /// The address tried last.
    var currentAddress: NATSServerAddress? { current.map { entries[$0].address } }

    /// Adds the `host:port` texts of INFO's `connect_urls` that are not in the pool yet (unreadable ones are
    /// skipped). Returns how many were added.
    @discardableResult
    mutating func learn(_ urls: [String]) -> Int {
        var added = 0
        for text in urls {
            guard let address = try? NATSServerAddress(parsing: text) else { continue }
            let known = entries.contains { $0.address.host == address.host && $0.address.port == address.port }
            guard !known else { continue }
            entries.append(Entry(address: address, isDiscovered: true))
            added += 1
        }
        return added
    }

    /// Chooses the server to try next, starting after the current one, skipping servers that failed
    /// `maxAttempts` times in a row (nil: no limit): the first in that order that may be tried at once, else the one
    /// whose wait (`reconnectWait` after its last attempt) ends first. Marks it tried at `now + delay`. Nil when no
    /// server is left.
    mutating func next(now: UInt64, reconnectWait: UInt64, maxAttempts: Int?) -> (
        address: NATSServerAddress, delay: UInt64
    )? {
        guard !entries.isEmpty else { return nil }
        let start = current.map { $0 + 1 } ?? 0
        var best: (index: Int, delay: UInt64)?
        for step in 0..<entries.count {
            let index = (start + step) % entries.count
            let entry = entries[index]
            if let maxAttempts, entry.failures >= maxAttempts { continue }
            var delay: UInt64 = 0
            if let last = entry.lastAttempt, now < last &+ reconnectWait { delay = last &+ reconnectWait - now }
            if best == nil || delay < best!.delay { best = (index, delay) }
            if delay == 0 { break }
        }
        guard let best else { return nil }
        current = best.index
        entries[best.index].lastAttempt = now + best.delay
        return (entries[best.index].address, best.delay)
    }

    /// The current server's attempt failed.
    mutating func currentFailed() {
        guard let current else { return }
        entries[current].failures += 1
    }

    /// The current server accepted the handshake: its failures are forgotten.
    mutating func currentConnected() {
        guard let current else { return }
        entries[current].failures = 0
    }
}
