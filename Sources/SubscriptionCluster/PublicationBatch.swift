import SubscriptionNATS
import SubscriptionWire

/// Consecutive publications of this node to one number, sent upstream as one NATS message (docs/CLUSTER.md,
/// "Subjects and headers", batches): a pipelining publisher's publications of one turn cost NATS one message, not
/// one each, and each receiving node one frame to read. A plain value; the bridge sends it at the end of the turn
/// (``ClusterBridge/sendBatch()``), or sooner when the next publication goes to another number or does not follow the
/// last one's counter (one origin's publications must reach a node in their counters' order), or would make it larger
/// than ``maxBytes``.
///
/// A batch of one is an ordinary publication: its own headers and payload. A batch of more has the headers
/// `Subd-Batch: <count>` and `Subd-Id: <origin> <first counter>`, and a payload of its publications one after the
/// other, each `<header bytes> <payload bytes>` LF, then its header block, then its payload. A publication with no
/// sender, info pairs or groups served has no header block (`0` header bytes): it is publication `<first counter> +
/// <its place>` of the batch's origin. One with any of them has the header block a single publication would have
/// (`NATS/1.0`, the fields, an empty line; its own `Subd-Id`).
struct PublicationBatch {
    /// The header that marks a batch and counts its publications.
    static let header = "Subd-Batch"
    /// A batch's payload stays below this (a publication larger than it goes alone).
    static let maxBytes = 64 * 1024

    /// What the receiving node reads of one publication: who sent it (its origin and counter, the publisher's
    /// name and info pairs), its header block (nil for one that has none) and its payload. `parts` is nil for a
    /// header block that is not a node's (that publication is skipped).
    struct Arrival {
        var parts: BridgeHeaders.Parts?
        var headers: NATSHeaders?
        var payload: ArraySlice<UInt8>
    }

    /// The number the publications go to; nil while empty.
    private(set) var number: String?
    /// How many publications it holds.
    private(set) var count = 0
    /// The origin and counter of the first publication (those after it follow it, one by one).
    private var origin = ""
    private var firstCounter: UInt64 = 0
    /// The first publication, kept as it is while it is the only one (its headers, nil when it has no sender, info
    /// or groups: they are made only if it goes alone).
    private var single: (headers: NATSHeaders?, payload: [UInt8])?
    /// The encoded publications, once there are two.
    private var body: [UInt8] = []
    /// The bytes of the publications so far as a batch's payload holds them (sizes line, header block, payload).
    private var encodedBytes = 0

    /// True when it holds nothing.
    var isEmpty: Bool { count == 0 }

    /// True when publication `counter` to `number`, with `headers` (nil: no sender, info or groups) and
    /// `payloadBytes`, may join it: the same number, the next counter, and the batch's payload with it stays within
    /// `limit` and ``maxBytes`` (the caller passes half the NATS server's `max_payload`; the batch's own header block
    /// is small). An empty batch takes anything.
    func accepts(
        _ number: String, counter: UInt64, headers: NATSHeaders?, payloadBytes: Int, limit: Int = maxBytes
    ) -> Bool {
        guard let current = self.number else { return true }
        return current == number && counter == firstCounter &+ UInt64(count)
            && encodedBytes + Self.entryBytes(headers, payloadBytes) <= min(limit, Self.maxBytes)
    }

    /// What one publication adds to a batch's payload: its sizes line (two numbers of at most 9 digits, a space
    /// and a newline, counted at their longest), its header block and its payload.
    private static func entryBytes(_ headers: NATSHeaders?, _ payloadBytes: Int) -> Int {
        20 + (headers?.encodedBlockCount ?? 0) + payloadBytes
    }

    /// Adds publication `counter` of `origin` (the caller checked ``accepts(_:counter:headers:payloadBytes:limit:)``);
    /// `headers` nil when it has no sender, info pairs or groups.
    mutating func append(
        to number: String, origin: String, counter: UInt64, headers: NATSHeaders?, payload: ArraySlice<UInt8>
    ) {
        encodedBytes += Self.entryBytes(headers, payload.count)
        if count == 0 {
            self.number = number
            self.origin = origin
            firstCounter = counter
            single = (headers, Array(payload))
        } else {
            if let first = single {
                Self.encode(first.headers, first.payload[...], into: &body)
                single = nil
            }
            Self.encode(headers, payload, into: &body)
        }
        count += 1
    }

    /// The message to send, and empties the batch: the headers and payload (a batch's own for two or more).
    mutating func take() -> (number: String, headers: NATSHeaders, payload: [UInt8])? {
        guard let number else { return nil }
        defer { self = PublicationBatch() }
        if let single {
            let headers =
                single.headers ?? BridgeHeaders.encode(origin: origin, counter: firstCounter, sender: nil, info: [])
            return (number, headers, single.payload)
        }
        var headers = NATSHeaders()
        headers.append(Self.header, "\(count)")
        headers.append(BridgeHeaders.id, BridgeHeaders.encodeID(origin: origin, counter: firstCounter))
        return (number, headers, body)
    }

    /// Appends one publication: its sizes line, its header block (none for nil) and its payload, written in place.
    private static func encode(_ headers: NATSHeaders?, _ payload: ArraySlice<UInt8>, into body: inout [UInt8]) {
        ASCIIDecimal.append(UInt64(headers?.encodedBlockCount ?? 0), to: &body)
        body.append(UInt8(ascii: " "))
        ASCIIDecimal.append(UInt64(payload.count), to: &body)
        body.append(UInt8(ascii: "\n"))
        headers?.encodeBlock(into: &body)
        body.append(contentsOf: payload)
    }

    /// The publications of a message: a batch's, in order, or the message's own. Nil when a batch does not read back
    /// (no node sent it: the whole message is ignored), and for a publication without a header block in a batch that
    /// does not say whose it is (a batch of an earlier version has none).
    static func publications(of message: NATSMessage) -> [Arrival]? {
        guard let text = message.headers?[header] else {
            return [
                Arrival(
                    parts: BridgeHeaders.decode(message.headers), headers: message.headers,
                    payload: message.payload[...])
            ]
        }
        // Each publication takes at least 4 bytes (`0 0` and a newline): a count the payload cannot hold is refused
        // before anything is reserved for it.
        guard let count = Int(text), count >= 2, count <= message.payload.count / 4 else { return nil }
        let first = message.headers?[BridgeHeaders.id].flatMap(BridgeHeaders.decodeID)
        var items: [Arrival] = []
        items.reserveCapacity(count)
        var rest = message.payload[...]
        while !rest.isEmpty {
            guard items.count < count, let newline = rest.firstIndex(of: UInt8(ascii: "\n")),
                let sizes = sizes(rest[..<newline]),
                rest.index(after: newline) + sizes.header + sizes.payload <= rest.endIndex
            else { return nil }
            let blockStart = rest.index(after: newline)
            let payloadStart = blockStart + sizes.header
            let payload = rest[payloadStart..<payloadStart + sizes.payload]
            if sizes.header == 0 {
                guard let first else { return nil }
                let parts = (first.origin, first.counter &+ UInt64(items.count), nil as String?, [] as [InfoPair])
                items.append(Arrival(parts: parts, headers: nil, payload: payload))
            } else {
                guard let headers = rest[blockStart..<payloadStart].withUnsafeBytes({ try? NATSHeaders(block: $0) })
                else { return nil }
                items.append(Arrival(parts: BridgeHeaders.decode(headers), headers: headers, payload: payload))
            }
            rest = rest[(payloadStart + sizes.payload)...]
        }
        return items.count == count ? items : nil
    }

    /// `<header bytes> <payload bytes>`, both decimal (at most 9 digits each).
    private static func sizes(_ line: ArraySlice<UInt8>) -> (header: Int, payload: Int)? {
        guard let space = line.firstIndex(of: UInt8(ascii: " ")) else { return nil }
        guard let header = decimal(line[..<space]), let payload = decimal(line[(space + 1)...]) else {
            return nil
        }
        return (header, payload)
    }

    private static func decimal(_ digits: ArraySlice<UInt8>) -> Int? {
        ASCIIDecimal.value(of: digits, maxDigits: 9).map { Int($0) }
    }
}
