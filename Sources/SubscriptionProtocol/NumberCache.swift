import SubscriptionWire

/// The numbers one client published to lately, each checked (``Names/check(_:allowWildcards:)``) and made a `String`
/// once: a `PUB` to one of them again costs a byte compare (the last number) or a hash and a compare (up to
/// ``capacity`` others), not a check, a decode and, for a number over 15 bytes, an allocation per message (nats-server
/// keeps such a per-client cache of subjects for the same reason).
///
/// A client that publishes to one number only costs its bytes' array; the table (``capacity`` slots, 8 KiB, and each
/// number's bytes) is made when a second number comes. A slot holds one number; a number whose ``probes`` slots are
/// all taken replaces the first, so the table never grows. A lookup that misses only costs the check it was meant to
/// save.
struct NumberCache {
    /// Slots in the table.
    static let capacity = 256
    /// Slots a number may take, from the one its hash picks: 100 numbers published to in turn all stay.
    static let probes = 8

    /// The number of the last `PUB` that missed the cache ("" before one): the one a client publishing to a single
    /// number sends again.
    private(set) var last = ""
    /// The UTF-8 bytes of ``last``, kept beside it: comparing a slice with an array's bytes is one `memcmp`-like
    /// pass, while reaching a `String`'s bytes goes through its view (about 5% of an ingest's time).
    private(set) var lastBytes: [UInt8] = []
    /// The table, empty until a second number was seen; a slot with an empty number is free. Each slot keeps its
    /// number's hash, so a probe compares bytes only when the hashes agree (100 numbers in turn mostly find their
    /// slot at the first probe, and pass the others by one integer compare).
    private var slots: [Slot] = []

    private struct Slot {
        var hash = 0
        var number = ""
        /// The UTF-8 bytes of `number`, compared instead of the string's own.
        var bytes: [UInt8] = []
    }

    /// The cached `String` in the table whose UTF-8 bytes are `bytes`, if there is one. The parser first asks
    /// ``same(_:_:)`` about ``last`` itself (``CommandParser/cachedNumber(_:)``): a call of this method on the
    /// parser's cache, with a slice of the parser's buffer, costs a retain of that buffer.
    func number(inTableMatching bytes: ArraySlice<UInt8>) -> String? {
        guard !slots.isEmpty else { return nil }
        let hash = bytes.withUnsafeBytes { Self.hash(of: $0) }
        return slots.withUnsafeBufferPointer { slots in
            for step in 0..<Self.probes {
                let slot = slots[(hash &+ step) & (Self.capacity - 1)]
                if slot.hash == hash && Self.same(bytes, slot.bytes) { return slot.number }
            }
            return nil
        }
    }

    /// Remembers a number that passed the check (its bytes are those the cache missed); it becomes ``last``.
    mutating func insert(_ number: String) {
        // One array of the bytes, for the slot and for ``lastBytes``.
        let bytes = Array(number.utf8)
        defer {
            last = number
            lastBytes = bytes
        }
        if slots.isEmpty {
            guard !last.isEmpty else { return }
            slots = [Slot](repeating: Slot(), count: Self.capacity)
            store(last, bytes: lastBytes)
        }
        store(number, bytes: bytes)
    }

    /// Puts `number` (whose UTF-8 bytes are `bytes`) in its slot.
    private mutating func store(_ number: String, bytes: [UInt8]) {
        let hash = bytes.withUnsafeBytes { Self.hash(of: $0) }
        var free = hash & (Self.capacity - 1)
        for step in 0..<Self.probes where slots[(hash &+ step) & (Self.capacity - 1)].number.isEmpty {
            free = (hash &+ step) & (Self.capacity - 1)
            break
        }
        slots[free] = Slot(hash: hash, number: number, bytes: bytes)
    }

    /// The hash of a number's bytes; its low bits pick the first slot.
    private static func hash(of bytes: UnsafeRawBufferPointer) -> Int {
        NameBytes.hash(bytes, seed: 0)
    }

    /// True when `bytes` are the bytes of a cached number, `stored` (never for an empty one: it marks a free slot).
    static func same(_ bytes: ArraySlice<UInt8>, _ stored: [UInt8]) -> Bool {
        guard stored.count == bytes.count, !bytes.isEmpty else { return false }
        return stored.withUnsafeBytes { storedBytes in bytes.withUnsafeBytes { NameBytes.equal(storedBytes, $0) } }
    }
}
