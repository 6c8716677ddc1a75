import SubscriptionWire

/// The entries of the numbers sent to lately, found again by the bits of the `String` a send was given: a publisher
/// sends to a few numbers again and again, and the daemon's parser hands the center the same `String` for each of
/// them (its number cache), so a send is a hash of two words and a compare of two, not a hash of the name's bytes,
/// a table probe and a byte compare. A `String` with other bits (another number, or the same number in other
/// storage) misses and is looked up; the entry it finds then takes the slot.
///
/// Invariant: a slot's `name` is a string the cache holds, so its storage object (a string over 15 UTF-8 bytes) is
/// alive and no other string can have its address; equal bits therefore mean equal strings. The converse need not
/// hold: unequal bits only mean "look it up". A removed number's entry is forgotten (``forget(_:)``) before its
/// name can be made again.
@usableFromInline struct SentEntryCache<Message> {
    /// Slots in the cache (24 KiB once a send was made), one per string's bits: of 100 numbers sent to in turn (the
    /// bench's `wide`) about 5 share a slot with another and are looked up each time; with 128 slots it was 30.
    @inlinable static var slotCount: Int { 1024 }

    @usableFromInline struct Slot {
        @usableFromInline var name = ""
        @usableFromInline var entry: NumberEntry<Message>?

        @inlinable init(name: String = "", entry: NumberEntry<Message>? = nil) {
            self.name = name
            self.entry = entry
        }
    }

    /// Empty until the first ``remember(_:_:)``: a center that never sends holds no slots.
    @usableFromInline var slots: [Slot] = []

    /// An empty cache.
    @inlinable init() {}

    /// The entry remembered for `number`'s bits, or nil.
    @inline(__always)
    @inlinable func entry(for number: String) -> NumberEntry<Message>? {
        guard !slots.isEmpty else { return nil }
        return slots.withUnsafeBufferPointer { slots in
            let slot = slots[Self.index(of: number)]
            return Self.isSameString(slot.name, number) ? slot.entry : nil
        }
    }

    /// Remembers `entry` for `number`, in place of what its slot held.
    @inlinable mutating func remember(_ entry: NumberEntry<Message>, for number: String) {
        if slots.isEmpty { slots = Array(repeating: Slot(), count: Self.slotCount) }
        slots[Self.index(of: number)] = Slot(name: number, entry: entry)
    }

    /// Forgets `entry` (its number was removed).
    @inlinable mutating func forget(_ entry: NumberEntry<Message>) {
        for index in slots.indices where slots[index].entry === entry { slots[index] = Slot() }
    }

    /// The slot of a string's bits.
    @inline(__always)
    @inlinable static func index(of number: String) -> Int {
        let (low, high) = bits(of: number)
        // A multiplicative hash of both words: small strings differ in their bytes, large ones in their address.
        let mixed = (low ^ (high &* 0x9E37_79B9_7F4A_7C15)) &* 0xBF58_476D_1CE4_E5B9
        return Int(truncatingIfNeeded: mixed >> 54) & (slotCount - 1)
    }

    @inline(__always)
    @inlinable static func bits(of string: String) -> (UInt64, UInt64) {
        withUnsafeBytes(of: string) { $0.loadUnaligned(as: (UInt64, UInt64).self) }
    }

    /// True when the two strings have the same bits: the same small string (a string of up to 15 UTF-8 bytes keeps
    /// them in its bits), or the same storage object (see the invariant above). "" is never the same as a number.
    @inline(__always)
    @inlinable static func isSameString(_ kept: String, _ other: String) -> Bool {
        bits(of: kept) == bits(of: other)
    }
}
