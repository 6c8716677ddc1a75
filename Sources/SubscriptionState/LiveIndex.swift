import SubscriptionWire

/// What the log says exists, without the values' bytes: each number's kind, creation order, current revision, and
/// how many bytes its records take in a compacted log. Recovery builds it while replaying; the store keeps it up to
/// date, checks every call against it, and reads the live size off it to decide when to compact.
///
/// Numbers are keyed by their bytes (``ExactName``): canonically equivalent spellings are different numbers, as on
/// the wire and in the center.
///
/// The rules of the log live here once: a number is created once until removed; only an existing number is
/// removed; a value belongs to an existing retained number, at a revision above the one it has.
struct LiveIndex {
    /// One number.
    struct Entry: Equatable {
        var kind: StoredNumber.Kind
        /// Increases with every creation: sorting by it gives creation order.
        var sequence: UInt64
        /// The revision of its current value; 0 when it has none.
        var revision: UInt64 = 0
        /// Bytes of its `created` record.
        var createdBytes: Int
        /// Bytes of its current `value` record; 0 when it has none.
        var valueBytes: Int = 0
    }

    /// Why an operation breaks the log's rules. Recovery reports it as damage; the store as a bug of its caller.
    enum Refusal: Error, CustomStringConvertible {
        case exists(String)
        case missing(String)
        case notRetained(String)
        case staleRevision(String, revision: UInt64, current: UInt64)

        var description: String {
            switch self {
            case .exists(let name): return "number \(quoted(name)) is created while it exists"
            case .missing(let name): return "number \(quoted(name)) does not exist"
            case .notRetained(let name): return "number \(quoted(name)) is not retained"
            case .staleRevision(let name, let revision, let current):
                return "revision \(revision) of \(quoted(name)) does not follow its revision \(current)"
            }
        }
    }

    private(set) var entries: [ExactName: Entry] = [:]
    private var nextSequence: UInt64 = 0
    /// Bytes of a compacted log of this state: the header and every live record.
    private(set) var liveBytes = LogFormat.headerSize

    /// Adds `name` of `kind`, whose `created` record takes `recordBytes`.
    mutating func create(_ name: String, kind: StoredNumber.Kind, recordBytes: Int) throws(Refusal) {
        let key = ExactName(name)
        guard entries[key] == nil else { throw .exists(name) }
        entries[key] = Entry(kind: kind, sequence: nextSequence, createdBytes: recordBytes)
        nextSequence += 1
        liveBytes += recordBytes
    }

    /// Takes `name` out; returns its entry, which ``restore(_:_:)`` puts back.
    @discardableResult
    mutating func remove(_ name: String) throws(Refusal) -> Entry {
        guard let entry = entries.removeValue(forKey: ExactName(name)) else { throw .missing(name) }
        liveBytes -= entry.createdBytes + entry.valueBytes
        return entry
    }

    /// Puts back an entry that ``remove(_:)`` or ``create(_:kind:recordBytes:)`` changed, undoing a change whose
    /// record could not be written.
    mutating func restore(_ name: String, _ entry: Entry?) {
        let key = ExactName(name)
        if let old = entries.removeValue(forKey: key) { liveBytes -= old.createdBytes + old.valueBytes }
        if let entry {
            entries[key] = entry
            liveBytes += entry.createdBytes + entry.valueBytes
        }
    }

    /// Checks that `name` may take a value at `revision`.
    func checkPublish(_ name: String, revision: UInt64) throws(Refusal) {
        try Self.check(entries[ExactName(name)], name, revision: revision)
    }

    /// The rule of a value: its number exists, is retained, and has a lower revision.
    private static func check(_ entry: Entry?, _ name: String, revision: UInt64) throws(Refusal) {
        guard let entry else { throw .missing(name) }
        guard entry.kind == .retained else { throw .notRetained(name) }
        guard revision > entry.revision else { throw .staleRevision(name, revision: revision, current: entry.revision) }
    }

    /// Sets `name`'s current value to one at `revision` whose `value` record takes `recordBytes`. Returns the entry
    /// as it was, which ``restore(_:_:)`` puts back.
    @discardableResult
    mutating func publish(_ name: String, revision: UInt64, recordBytes: Int) throws(Refusal) -> Entry {
        // One lookup: this runs for every retained value saved.
        guard let index = entries.index(forKey: ExactName(name)) else { throw .missing(name) }
        let old = entries.values[index]
        try Self.check(old, name, revision: revision)
        entries.values[index].revision = revision
        entries.values[index].valueBytes = recordBytes
        liveBytes += recordBytes - old.valueBytes
        return old
    }

    /// The numbers, oldest first.
    var numbersInCreationOrder: [StoredNumber] {
        entries.sorted { $0.value.sequence < $1.value.sequence }.map {
            StoredNumber(name: $0.key.string, kind: $0.value.kind)
        }
    }
}
