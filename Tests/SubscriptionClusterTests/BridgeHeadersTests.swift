import SubscriptionNATS
import SubscriptionWire
import XCTest

@testable import SubscriptionCluster

/// Subjects and headers of publications between nodes, written and read in one place.
final class BridgeHeadersTests: XCTestCase {
    func testHeadersRoundTripWithSenderAndPairsInOrder() throws {
        let info = [InfoPair(key: "unit", value: "EUR"), InfoPair(key: "price", value: "12")]
        let headers = BridgeHeaders.encode(origin: "node1-x", counter: 7, sender: "lab", info: info)
        XCTAssertEqual(headers["Subd-Id"], "node1-x 7")
        XCTAssertEqual(headers["Subd-Info"], "unit=EUR price=12")
        let decoded = try XCTUnwrap(BridgeHeaders.decode(headers))
        XCTAssertEqual(decoded.origin, "node1-x")
        XCTAssertEqual(decoded.counter, 7)
        XCTAssertEqual(decoded.sender, "lab")
        XCTAssertEqual(decoded.info, info)
    }

    func testWithoutSenderOrPairsOnlyTheIdTravels() throws {
        let headers = BridgeHeaders.encode(origin: "n", counter: 1, sender: nil, info: [])
        XCTAssertEqual(headers.fields.map(\.name), ["Subd-Id"])
        let decoded = try XCTUnwrap(BridgeHeaders.decode(headers))
        XCTAssertNil(decoded.sender)
        XCTAssertEqual(decoded.info, [])
    }

    func testMessagesNoNodeSentAreRefused() {
        XCTAssertNil(BridgeHeaders.decode(nil))
        XCTAssertNil(BridgeHeaders.decode(["Subd-Id": "no-counter"]))
        for bad in ["n x", " 12", "n ", "n 1 2", "n  1", "n -1", "n +1", "n 99999999999999999999", ""] {
            XCTAssertNil(BridgeHeaders.decodeID(bad), bad)
        }
        XCTAssertEqual(BridgeHeaders.decodeID("node1-x 18446744073709551615")?.counter, nil, "20 digits")
        XCTAssertEqual(BridgeHeaders.decodeID("node1-x 9999999999999999999")?.counter, 9_999_999_999_999_999_999)
        XCTAssertEqual(BridgeHeaders.decodeID("node1-x 0")?.origin, "node1-x")
        XCTAssertNil(BridgeHeaders.decode(["Subd-Id": "n 1", "Subd-Info": "from=me"]), "a server key as a pair")
        XCTAssertNil(BridgeHeaders.decode(["Subd-Id": "n 1", "Subd-Info": "novalue"]))
        XCTAssertNil(BridgeHeaders.decode(["Subd-Id": "n 1", "Subd-From": String(repeating: "x", count: 65)]))
    }

    func testSubjectsArePrefixedNamesAndBack() {
        XCTAssertEqual(BridgeHeaders.subject(of: "SCIENCE.>"), "subd.m.SCIENCE.>")
        XCTAssertEqual(BridgeHeaders.number(ofSubject: "subd.m.SCIENCE.physics"), "SCIENCE.physics")
        XCTAssertNil(BridgeHeaders.number(ofSubject: "subd.kv.subd_numbers.N"))
        XCTAssertNil(BridgeHeaders.number(ofSubject: "subd.m."))
    }

    /// A bucket write that waits for confirmations names its subject in `Subd-Ack` beside its `Subd-Id`; one that does
    /// not (`ack: local`), or whose headers are not a node's, asks for none.
    func testABucketWriteAsksForConfirmationsInItsHeaders() throws {
        let removal = BridgeHeaders.encodeRemoval(origin: "node1-x", counter: 9, replyTo: "subd.ack.node1-x")
        XCTAssertEqual(removal.fields.map(\.name), ["Subd-Id", "Subd-Ack"])
        let asked = try XCTUnwrap(BridgeHeaders.confirmationRequest(in: removal))
        XCTAssertEqual([asked.origin, "\(asked.counter)", asked.subject], ["node1-x", "9", "subd.ack.node1-x"])
        let local = BridgeHeaders.encodeRemoval(origin: "n", counter: 1, replyTo: nil)
        XCTAssertNil(BridgeHeaders.confirmationRequest(in: local), "ack: local")

        let value = BridgeHeaders.encodeRetained(
            origin: "node2-y", counter: 4, sender: "lab", info: [], revision: 3, generation: 2,
            replyTo: "subd.ack.node2-y")
        XCTAssertEqual(try XCTUnwrap(BridgeHeaders.confirmationRequest(in: value)).counter, 4)
        XCTAssertEqual(BridgeHeaders.decodeRetained(value, payload: [])?.revision, 3, "still a retained value")
        XCTAssertNil(BridgeHeaders.confirmationRequest(in: nil))
        XCTAssertNil(BridgeHeaders.confirmationRequest(in: ["Subd-Ack": "subd.ack.n"]), "no Subd-Id")
        XCTAssertNil(BridgeHeaders.confirmationRequest(in: ["Subd-Id": "n 1", "Subd-Ack": "elsewhere"]), "no node's")
    }
}
