import SubscriptionNATS
import SubscriptionWire
import XCTest

@testable import SubscriptionCluster

/// A node's publications to one number in one message: they read back as sent, in order, with their origin and
/// counters; a batch of one is an ordinary publication; a publication without a sender, info or groups travels
/// without a header block; and a batch that does not read back whole is refused whole.
final class PublicationBatchTests: XCTestCase {
    private func message(_ batch: inout PublicationBatch) -> NATSMessage {
        let (number, headers, payload) = batch.take()!
        return NATSMessage(subject: BridgeHeaders.subject(of: number), sid: 1, headers: headers, payload: payload)
    }

    /// The headers a publication carries in a batch: none without a sender, info pairs or groups.
    private func headers(
        _ counter: UInt64, sender: String? = nil, info: [InfoPair] = [], groups: [String] = []
    ) -> NATSHeaders? {
        sender == nil && info.isEmpty && groups.isEmpty
            ? nil
            : BridgeHeaders.encode(origin: "a-1", counter: counter, sender: sender, info: info, groups: groups)
    }

    private func append(_ batch: inout PublicationBatch, _ counter: UInt64, _ headers: NATSHeaders?, _ payload: [UInt8])
    {
        batch.append(to: "N", origin: "a-1", counter: counter, headers: headers, payload: payload[...])
    }

    func testABatchOfOneIsAnOrdinaryPublication() {
        var batch = PublicationBatch()
        XCTAssertTrue(batch.isEmpty)
        let headers = BridgeHeaders.encode(
            origin: "a-1", counter: 7, sender: "me", info: [InfoPair(key: "k", value: "v")])
        append(&batch, 7, headers, Array("hello".utf8))
        let sent = message(&batch)
        XCTAssertTrue(batch.isEmpty, "taken")
        XCTAssertEqual(sent.headers, headers)
        XCTAssertEqual(sent.payload, Array("hello".utf8))
        let read = PublicationBatch.publications(of: sent)
        XCTAssertEqual(read?.count, 1)
        XCTAssertEqual(read?.first?.headers, headers)
        XCTAssertEqual(read?.first?.parts?.counter, 7)
        XCTAssertEqual(read?.first?.parts?.sender, "me")
        XCTAssertNil(batch.take(), "nothing left")
    }

    /// Alone, a publication with nothing but its id still carries `Subd-Id` (a message without it is no node's).
    func testAPlainPublicationAloneCarriesItsID() {
        var batch = PublicationBatch()
        append(&batch, 3, nil, Array("x".utf8))
        let sent = message(&batch)
        XCTAssertEqual(sent.headers?[BridgeHeaders.id], "a-1 3")
        XCTAssertNil(sent.headers?[PublicationBatch.header])
        let read = PublicationBatch.publications(of: sent)
        XCTAssertEqual(read?.first?.parts?.origin, "a-1")
        XCTAssertEqual(read?.first?.parts?.counter, 3)
    }

    func testManyPublicationsReadBackInOrderWithTheirOwnHeadersAndEveryByteValue() {
        var batch = PublicationBatch()
        var sent: [(NATSHeaders?, [UInt8])] = []
        for index in 0..<200 {
            let counter = UInt64(index + 1)
            let headers = headers(
                counter, sender: index % 3 == 0 ? "s\(index)" : nil,
                info: index % 5 == 0 ? [InfoPair(key: "i", value: "\(index)")] : [], groups: index % 7 == 0 ? ["g"] : []
            )
            let payload =
                (0..<(index % 40)).map { UInt8(truncatingIfNeeded: $0 * 37 + index) }
                + (index == 5 ? Array(0...255) : [])
            XCTAssertTrue(batch.accepts("N", counter: counter, headers: headers, payloadBytes: payload.count))
            append(&batch, counter, headers, payload)
            sent.append((headers, payload))
        }
        XCTAssertFalse(
            batch.accepts("M", counter: 201, headers: nil, payloadBytes: 1), "another number starts another batch")
        XCTAssertFalse(
            batch.accepts("N", counter: 202, headers: nil, payloadBytes: 1),
            "a counter that does not follow (one taken by a bucket write) starts another batch")
        XCTAssertFalse(
            batch.accepts("N", counter: 201, headers: nil, payloadBytes: PublicationBatch.maxBytes), "no room")
        XCTAssertFalse(
            batch.accepts("N", counter: 201, headers: nil, payloadBytes: 100, limit: 4096),
            "no room below a NATS server's smaller limit")
        let message = message(&batch)
        XCTAssertEqual(message.headers?[PublicationBatch.header], "200")
        XCTAssertEqual(message.headers?[BridgeHeaders.id], "a-1 1")
        let read = PublicationBatch.publications(of: message)
        XCTAssertEqual(read?.count, 200)
        for (index, item) in (read ?? []).enumerated() {
            XCTAssertEqual(item.headers, sent[index].0, "headers of \(index)")
            XCTAssertEqual(Array(item.payload), sent[index].1, "payload of \(index)")
            XCTAssertEqual(item.parts?.origin, "a-1")
            XCTAssertEqual(item.parts?.counter, UInt64(index + 1))
            XCTAssertEqual(item.parts?.sender, index % 3 == 0 ? "s\(index)" : nil)
            XCTAssertEqual(item.parts?.info.map(\.value), index % 5 == 0 ? ["\(index)"] : [])
        }
    }

    /// A batch of the earlier format (every publication with its header block, no `Subd-Id` on the batch) still
    /// reads; one with a publication without a header block and no `Subd-Id` on the batch says nobody's: refused.
    func testABatchWhosePublicationsAllHaveHeadersNeedsNoIDOfItsOwn() {
        var batch = PublicationBatch()
        for counter in UInt64(1)...3 {
            append(&batch, counter, BridgeHeaders.encode(origin: "a-1", counter: counter, sender: "s", info: []), [1])
        }
        var whole = message(&batch)
        whole.headers = withoutID(whole.headers)
        XCTAssertEqual(PublicationBatch.publications(of: whole)?.map { $0.parts?.counter }, [1, 2, 3])
        for counter in UInt64(1)...3 { append(&batch, counter, nil, [1]) }
        var anonymous = message(&batch)
        XCTAssertEqual(PublicationBatch.publications(of: anonymous)?.count, 3)
        for id in ["", "a-1", "a-1 x", " 1", "a-1 -1"] {
            anonymous.headers?.set(BridgeHeaders.id, id)
            XCTAssertNil(PublicationBatch.publications(of: anonymous), "Subd-Id: \(id)")
        }
        anonymous.headers = withoutID(anonymous.headers)
        XCTAssertNil(PublicationBatch.publications(of: anonymous), "no Subd-Id")
    }

    /// `headers` but `Subd-Id`.
    private func withoutID(_ headers: NATSHeaders?) -> NATSHeaders {
        var kept = NATSHeaders()
        for field in headers?.fields ?? [] where field.name != BridgeHeaders.id { kept.append(field.name, field.value) }
        return kept
    }

    /// Large headers (info pairs of kilobytes) count against the room: a batch filled while it accepts stays within
    /// the limit, whatever mix of header and payload sizes.
    func testABatchStaysWithinItsLimitWithLargeHeaders() {
        var generator = SystemRandomNumberGenerator()
        let limit = 16 * 1024
        var batch = PublicationBatch()
        var sent = 0
        for index in 0..<400 {
            let info = [
                InfoPair(key: "k", value: String(repeating: "v", count: Int.random(in: 0...6_000, using: &generator)))
            ]
            let counter = UInt64(index + 1)
            let headers = index % 4 == 0 ? nil : self.headers(counter, sender: "s", info: info)
            let payload = [UInt8](repeating: 7, count: Int.random(in: 0...3_000, using: &generator))
            if !batch.accepts("N", counter: counter, headers: headers, payloadBytes: payload.count, limit: limit) {
                let taken = message(&batch)
                XCTAssertLessThanOrEqual(taken.payload.count, limit, "batch before publication \(index)")
                sent += PublicationBatch.publications(of: taken)?.count ?? 0
            }
            append(&batch, counter, headers, payload)
        }
        sent += PublicationBatch.publications(of: message(&batch))?.count ?? 0
        XCTAssertEqual(sent, 400)
    }

    /// Every cut, every changed byte of the sizes, a wrong count: refused whole (or, where a changed byte still reads
    /// as a batch of the same count, never more publications than were sent).
    func testABatchThatDoesNotReadBackIsRefusedWhole() {
        var batch = PublicationBatch()
        for index in 0..<3 {
            let counter = UInt64(index + 1)
            append(&batch, counter, index == 1 ? headers(counter, sender: "s") : nil, Array("p\(index)".utf8))
        }
        let whole = message(&batch)
        XCTAssertEqual(PublicationBatch.publications(of: whole)?.count, 3)
        for cut in 0..<whole.payload.count {
            var truncated = whole
            truncated.payload = Array(whole.payload[..<cut])
            XCTAssertNil(PublicationBatch.publications(of: truncated), "cut at \(cut)")
        }
        var extra = whole
        extra.payload += [0x30]
        XCTAssertNil(PublicationBatch.publications(of: extra), "a byte after the last")
        // A count far past what the payload holds (once a trap: space was reserved for it) is refused before.
        for count in [
            "2", "4", "1", "0", "-3", "x", "", "\(Int.max)", "\(whole.payload.count)", "99999999999999999999",
        ] {
            var wrong = whole
            wrong.headers?.set(PublicationBatch.header, count)
            XCTAssertNil(PublicationBatch.publications(of: wrong), "Subd-Batch: \(count)")
        }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var changed = whole
            let index = Int.random(in: 0..<changed.payload.count, using: &generator)
            changed.payload[index] = UInt8.random(in: 0...255, using: &generator)
            if let read = PublicationBatch.publications(of: changed) { XCTAssertEqual(read.count, 3) }
        }
    }
}
