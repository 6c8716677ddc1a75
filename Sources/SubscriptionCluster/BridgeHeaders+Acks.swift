import SubscriptionNATS
import SubscriptionWire

/// The confirmations of the cross-node `+OK <receivers>` (docs/CLUSTER.md, step 4): a publication waiting for them
/// carries the reply subject `subd.ack.<origin>`; a node that delivers it confirms there `<counter> <its origin>
/// <receivers>` for the copy of its plain subscription, and `<counter> <its origin> <receivers> <group>` for the copy
/// of a queue group's (docs/CLUSTER.md, steps 3 and 4: the two copies serve different sessions, so each is confirmed
/// and counted on its own). A node sends the confirmations of one turn to one subject together, one line per run of
/// consecutive counters with the same receivers and copy (`<first>-<last> ...`; ``ConfirmationBatch``), `LF` between
/// them, in one NATS message. A bucket write that waits the same way (a `REMOVE`'s delete, a retained
/// value; steps 5 and 6) cannot carry a reply subject (the write's own is JetStream's acknowledgement): it carries
/// `Subd-Id: <origin> <counter>` and `Subd-Ack: subd.ack.<origin>`, and a node that applies it as its watch sees it
/// stored confirms there as for a publication. Written and read only here.
extension BridgeHeaders {
    /// One confirmation.
    struct Confirmation: Equatable {
        /// The publication's counter (`Subd-Id`), the ticket it waits under: the first of a run.
        var counter: UInt64
        /// The last counter of the run this line confirms, each with the same receivers (`counter` for one).
        var last: UInt64
        /// The confirming node's origin id.
        var origin: String
        /// The sessions the copy was queued for there.
        var receivers: Int
        /// The queue group whose copy this is; nil for the plain copy.
        var group: String?

        /// A confirmation of `counter` (or of the run `counter...last`).
        init(counter: UInt64, last: UInt64? = nil, origin: String, receivers: Int, group: String? = nil) {
            self.counter = counter
            self.last = last ?? counter
            self.origin = origin
            self.receivers = receivers
            self.group = group
        }
    }

    /// The longest run one line may confirm.
    static let maxRun: UInt64 = 1 << 20

    /// The most receivers one line may confirm (no node holds more sessions): sums of them cannot overflow.
    static let maxReceivers: UInt64 = 1 << 32

    /// The subject prefix of confirmations.
    static let ackPrefix = "subd.ack."
    /// The header of a bucket write that names the subject its confirmations go to.
    static let ack = "Subd-Ack"

    /// The headers of a `REMOVE`'s delete: `Subd-Id`, and `Subd-Ack` with `replyTo` when the remover waits.
    static func encodeRemoval(origin: String, counter: UInt64, replyTo: String?) -> NATSHeaders {
        var headers = NATSHeaders()
        headers.append(id, "\(origin) \(counter)")
        if let replyTo { headers.append(ack, replyTo) }
        return headers
    }

    /// Who asks a bucket write to be confirmed: its writer's origin, the counter to confirm and the subject (a
    /// confirmation subject, `subd.ack.<origin>`); nil when the write asks for none (no `Subd-Ack`, `ack: local`),
    /// or its headers are not a node's.
    static func confirmationRequest(
        in headers: NATSHeaders?
    ) -> (origin: String, counter: UInt64, subject: String)? {
        guard let headers, let subject = headers[ack], subject.hasPrefix(ackPrefix), let idText = headers[id] else {
            return nil
        }
        guard let (origin, counter) = decodeID(idText) else { return nil }
        return (origin, counter, subject)
    }

    /// The subject a node's confirmations come to.
    static func ackSubject(of origin: String) -> String { ackPrefix + origin }

    /// Appends a confirmation's line to `batch` (after a `LF` when it holds one already): `<counter> <origin>
    /// <receivers>[ <group>]`, or `<first>-<last> ...` for a run of counters that each reached the same receivers.
    static func appendConfirmation(
        counter: UInt64, last: UInt64? = nil, origin: String, receivers: Int, group: String? = nil,
        to batch: inout [UInt8]
    ) {
        if !batch.isEmpty { batch.append(UInt8(ascii: "\n")) }
        ASCIIDecimal.append(counter, to: &batch)
        if let last, last != counter {
            batch.append(UInt8(ascii: "-"))
            ASCIIDecimal.append(last, to: &batch)
        }
        batch.append(UInt8(ascii: " "))
        batch.append(contentsOf: origin.utf8)
        batch.append(UInt8(ascii: " "))
        ASCIIDecimal.append(UInt64(max(0, receivers)), to: &batch)
        if let group {
            batch.append(UInt8(ascii: " "))
            batch.append(contentsOf: group.utf8)
        }
    }

    /// The confirmations of a batch, in order; nil when a line is not one (the whole batch is ignored: no node sent
    /// it). Read in place, word by word (no array of lines or words is made).
    static func decodeConfirmations(_ payload: [UInt8]) -> [Confirmation]? {
        var confirmations: [Confirmation] = []
        var lineStart = payload.startIndex
        while true {
            let lineEnd = payload[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? payload.endIndex
            guard let confirmation = decodeConfirmation(payload[lineStart..<lineEnd]) else { return nil }
            confirmations.append(confirmation)
            guard lineEnd < payload.endIndex else { return confirmations }
            lineStart = lineEnd + 1
        }
    }

    /// One line: three or four words split by single spaces, the counter and the receivers decimal digits.
    private static func decodeConfirmation(_ line: ArraySlice<UInt8>) -> Confirmation? {
        var rest: ArraySlice<UInt8>? = line
        guard let (counter, last) = nextWord(&rest).flatMap(run), let origin = nextWord(&rest), !origin.isEmpty,
            let receivers = nextWord(&rest).flatMap({ ASCIIDecimal.value(of: $0) }), receivers <= maxReceivers
        else { return nil }
        var group: String?
        if let word = nextWord(&rest) {
            guard !word.isEmpty, nextWord(&rest) == nil else { return nil }
            group = String(decoding: word, as: UTF8.self)
        }
        return Confirmation(
            counter: counter, last: last, origin: String(decoding: origin, as: UTF8.self), receivers: Int(receivers),
            group: group)
    }

    /// `<counter>` or `<first>-<last>` (first below last, at most ``maxRun`` counters).
    private static func run(_ word: ArraySlice<UInt8>) -> (UInt64, UInt64)? {
        guard let dash = word.firstIndex(of: UInt8(ascii: "-")) else {
            return ASCIIDecimal.value(of: word).map { ($0, $0) }
        }
        guard let first = ASCIIDecimal.value(of: word[..<dash]), let last = ASCIIDecimal.value(of: word[(dash + 1)...]),
            first < last, last - first < maxRun
        else { return nil }
        return (first, last)
    }

    /// The word at the front of `rest` (up to the next space, or the end), taken off with its space; nil once `rest`
    /// is used up. A space at the very end leaves an empty last word.
    private static func nextWord(_ rest: inout ArraySlice<UInt8>?) -> ArraySlice<UInt8>? {
        guard let remaining = rest else { return nil }
        guard let space = remaining.firstIndex(of: UInt8(ascii: " ")) else {
            rest = nil
            return remaining
        }
        rest = remaining[(space + 1)...]
        return remaining[..<space]
    }
}
