import SubscriptionNATS
import SubscriptionWire
import XCTest

@testable import SubscriptionCluster

/// A node's publications to one number in one message: they read back as sent, in order, a batch of one is an
/// ordinary publication, and a batch that does not read back whole is refused whole.
final class PublicationBatchTests: XCTestCase {
    private func message(_ batch: inout PublicationBatch) -> NATSMessage {
        let (number, headers, payload) = batch.take()!
        return NATSMessage(subject: BridgeHeaders.subject(of: number), sid: 1, headers: headers, payload: payload)
    }

    func testABatchOfOneIsAnOrdinaryPublication() {
        var batch = PublicationBatch()
        XCTAssertTrue(batch.isEmpty)
        let headers = BridgeHeaders.encode(
            origin: "a-1", counter: 7, sender: "me", info: [InfoPair(key: "k", value: "v")])
        batch.append(to: "N", headers: headers, payload: Array("hello".utf8)[...])
        let sent = message(&batch)
        XCTAssertTrue(batch.isEmpty, "taken")
        XCTAssertEqual(sent.headers, headers)
        XCTAssertEqual(sent.payload, Array("hello".utf8))
        let read = PublicationBatch.publications(of: sent)
        XCTAssertEqual(read?.count, 1)
        XCTAssertEqual(read?.first?.headers, headers)
        XCTAssertNil(batch.take(), "nothing left")
    }

    func testManyPublicationsReadBackInOrderWithTheirOwnHeadersAndEveryByteValue() {
        var batch = PublicationBatch()
        var sent: [(NATSHeaders, [UInt8])] = []
        for index in 0..<200 {
            let headers = BridgeHeaders.encode(
                origin: "a-1", counter: UInt64(index + 1), sender: index % 3 == 0 ? "s\(index)" : nil,
                info: index % 5 == 0 ? [InfoPair(key: "i", value: "\(index)")] : [],
                groups: index % 7 == 0 ? ["g"] : [])
            let payload =
                (0..<(index % 40)).map { UInt8(truncatingIfNeeded: $0 * 37 + index) }
                + (index == 5 ? Array(0...255) : [])
            XCTAssertTrue(batch.accepts("N", headers: headers, payloadBytes: payload.count))
            batch.append(to: "N", headers: headers, payload: payload[...])
            sent.append((headers, payload))
        }
        let small = NATSHeaders()
        XCTAssertFalse(batch.accepts("M", headers: small, payloadBytes: 1), "another number starts another batch")
        XCTAssertFalse(batch.accepts("N", headers: small, payloadBytes: PublicationBatch.maxBytes), "no room")
        XCTAssertFalse(
            batch.accepts("N", headers: small, payloadBytes: 100, limit: 4096),
            "no room below a NATS server's smaller limit")
        let message = message(&batch)
        XCTAssertEqual(message.headers?[PublicationBatch.header], "200")
        let read = PublicationBatch.publications(of: message)
        XCTAssertEqual(read?.count, 200)
        for (index, item) in (read ?? []).enumerated() {
            XCTAssertEqual(item.headers, sent[index].0, "headers of \(index)")
            XCTAssertEqual(Array(item.payload), sent[index].1, "payload of \(index)")
            XCTAssertEqual(BridgeHeaders.decode(item.headers)?.counter, UInt64(index + 1))
        }
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
            let headers = BridgeHeaders.encode(
                origin: "a-1", counter: UInt64(index + 1), sender: "s", info: info, groups: [])
            let payload = [UInt8](repeating: 7, count: Int.random(in: 0...3_000, using: &generator))
            if !batch.accepts("N", headers: headers, payloadBytes: payload.count, limit: limit) {
                let taken = message(&batch)
                XCTAssertLessThanOrEqual(taken.payload.count, limit, "batch before publication \(index)")
                sent += PublicationBatch.publications(of: taken)?.count ?? 0
            }
            batch.append(to: "N", headers: headers, payload: payload[...])
        }
        sent += PublicationBatch.publications(of: message(&batch))?.count ?? 0
        XCTAssertEqual(sent, 400)
    }

    /// Every cut, every changed byte of the sizes, a wrong count: refused whole (or, where a changed byte still reads
    /// as a batch of the same count, never more publications than were sent).
    func testABatchThatDoesNotReadBackIsRefusedWhole() {
        var batch = PublicationBatch()
        for index in 0..<3 {
            batch.append(
                to: "N", headers: BridgeHeaders.encode(origin: "a", counter: UInt64(index + 1), sender: nil, info: []),
                payload: Array("p\(index)".utf8)[...])
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
