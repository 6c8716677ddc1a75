import SubscriptionProtocol

/// What the server keeps about saving between the calls of a turn (issue 21, docs/STATE.md): the values staged by
/// publications to retained numbers, and whether saving works.
/// Plain data; ``Server`` (State/Server+Staging.swift) acts on it.
struct StateSaving {
    /// A publication to a retained number whose value waits for the end-of-turn save: its frame is made (with the
    /// revision it will have), its record is in the store's buffer, and nothing else has happened yet.
    struct StagedValue {
        /// The publisher, answered once the value is saved (or could not be).
        let session: Session
        /// The retained number.
        let number: String
        /// The revision the value will have: the one after the number's last value, staged or saved.
        let revision: UInt64
        /// The publisher's name (`from=`).
        let sender: String?
        /// The value, framed once for every receiver.
        let publication: Publication
    }

    /// Whether changes are saved.
    enum Health: Equatable {
        /// Every save so far worked (or the last one did, after failures).
        case working
        /// The last write failed (a full disk); each change tries again, and the first that is written ends this.
        case failing
        /// A sync failed: nothing written since the last good sync can be trusted, so every change is refused until a
        /// restart reads what the disk has.
        case stopped
    }

    /// The turn's staged values, in the order of their publications.
    var staged: [StagedValue] = []
    /// Whether saving works.
    var health = Health.working
    /// True from a failed compaction until one succeeds (logged once, not once a second).
    var compactionFailing = false

    /// The staged values, taken out in order; ``giveBack(_:)`` returns the list's storage for the next turn.
    mutating func takeStaged() -> [StagedValue] {
        var values: [StagedValue] = []
        swap(&values, &staged)
        return values
    }

    /// Empties `values` (taken by ``takeStaged()`` and answered) and keeps its storage, unless values were staged
    /// meanwhile.
    mutating func giveBack(_ values: inout [StagedValue]) {
        values.removeAll(keepingCapacity: true)
        if staged.isEmpty { swap(&values, &staged) }
    }

}
