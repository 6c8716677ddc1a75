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
}
