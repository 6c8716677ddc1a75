import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire
import XCTest

/// The center fans out one ``Publication``: a customer that is not a socket (a test, a bridge, the daemon itself)
/// reads its parts without parsing bytes, and every receiver gets the very same object (its frame encoded once).
final class PublicationFanOutTests: XCTestCase {
    /// A customer that keeps what it receives.
    final class Recorder: Customer {
        var received: [Publication] = []
        var removed: [String] = []

        func receive(_ publication: Publication, on number: String) -> Bool {
            received.append(publication)
            return true
        }

        func numberRemoved(_ number: String) {
            removed.append(number)
        }
    }

    func testEveryReceiverGetsTheSamePublicationAndReadsItsParts() throws {
        let center = SubscriptionCenter<Publication>()
        try center.create("SCIENCE.physics")
        let exact = Recorder()
        let wildcard = Recorder()
        try center.add(exact, to: "SCIENCE.physics")
        try center.add(wildcard, to: "SCIENCE.>")
        let info = [InfoPair(key: "unit", value: "EUR"), InfoPair(key: "note", value: "a%20b")]
        let publication = Publication.make(
            number: "SCIENCE.physics", sender: "lab", info: info, payload: Array("12".utf8))
        XCTAssertEqual(try center.send(publication, to: publication.number, from: publication.sender), 2)

        for recorder in [exact, wildcard] {
            let got = try XCTUnwrap(recorder.received.first)
            XCTAssertTrue(got === publication, "a reference to the one publication, not a copy")
            XCTAssertEqual(got.number, "SCIENCE.physics")
            XCTAssertEqual(got.sender, "lab")
            XCTAssertEqual(got.info, info)
            XCTAssertEqual(got.payload, Array("12".utf8))
        }
        try center.remove("SCIENCE.physics")
        XCTAssertEqual(exact.removed, ["SCIENCE.physics"], "GONE through the Customer requirement")
        XCTAssertEqual(wildcard.removed, [])
    }
}
