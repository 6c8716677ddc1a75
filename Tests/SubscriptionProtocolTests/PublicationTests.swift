import SubscriptionWire
import TestSupport
import XCTest

@testable import SubscriptionProtocol

/// A publication: its `MSG` frame (exact bytes and size), and its parts read back without parsing.
final class PublicationTests: XCTestCase {
    private func frame(_ number: String, _ payload: [UInt8], from: String?, info: [InfoPair] = []) -> [UInt8] {
        Publication.make(number: number, sender: from, info: info, payload: payload).frame
    }

    func testFrameWithoutFrom() {
        XCTAssertEqual(frame("SCIENCE", bytes("V1.0"), from: nil), bytes("MSG SCIENCE 4\nV1.0\n"))
    }

    func testFrameWithFrom() {
        XCTAssertEqual(
            frame("SCIENCE.physics", bytes("V2.0!"), from: "pub1"),
            bytes("MSG SCIENCE.physics 5 from=pub1\nV2.0!\n"))
    }

    func testInfoPairsFollowTheServersOwnKeysInTheOrderGiven() {
        let info = [InfoPair(key: "unit", value: "EUR"), InfoPair(key: "price", value: "12")]
        XCTAssertEqual(
            frame("SCIENCE", bytes("V1.0"), from: "lab", info: info),
            bytes("MSG SCIENCE 4 from=lab unit=EUR price=12\nV1.0\n"))
        XCTAssertEqual(
            frame("SCIENCE", bytes("V1.0"), from: nil, info: info),
            bytes("MSG SCIENCE 4 unit=EUR price=12\nV1.0\n"))
    }

    func testEmptyPayload() {
        XCTAssertEqual(frame("A", [], from: nil), bytes("MSG A 0\n\n"))
        XCTAssertEqual(frame("A", [], from: "Zoë"), bytes("MSG A 0 from=Zoë\n\n"))
    }

    func testBinaryPayloadAndUnicodeNumber() {
        let payload = (0...255).map { UInt8($0) }
        XCTAssertEqual(frame("ÉTÉ.x", payload, from: nil), bytes("MSG ÉTÉ.x 256\n") + payload + [0x0A])
    }

    func testFrameSizeAndPartsForManyLengths() {
        var generator = SeededGenerator(seed: 3)
        for count in [0, 1, 9, 10, 11, 99, 100, 999, 1000, 10_000, 65_536, 1_048_576] {
            let payload = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let from: String? = count % 2 == 0 ? "client-\(count)" : nil
            let info = (0..<(count % 4)).map { InfoPair(key: "k\($0)", value: String(repeating: "v", count: $0 + 1)) }
            let publication = Publication.make(number: "N.\(count)", sender: from, info: info, payload: payload)
            let header =
                "MSG N.\(count) \(count)" + (from.map { " from=\($0)" } ?? "")
                + info.map { " \($0.key)=\($0.value)" }.joined() + "\n"
            XCTAssertEqual(publication.frame, bytes(header) + payload + [0x0A], "\(count)")
            XCTAssertEqual(publication.frameCount, publication.frame.count)
            XCTAssertEqual(publication.number, "N.\(count)")
            XCTAssertEqual(publication.sender, from)
            XCTAssertEqual(publication.info, info)
            XCTAssertEqual(publication.payload, payload)
            XCTAssertEqual(publication.payloadCount, count)
            XCTAssertGreaterThanOrEqual(publication.heldBytes, publication.frameCount + Publication.overhead)
        }
    }

    /// A system number is told apart in place, by its first byte only.
    func testNumberStartsWithDollar() {
        let cases = [("$SYS.stats", true), ("$", true), ("SYS.$x", false), ("A", false), ("ÉTÉ", false)]
        for (number, expected) in cases {
            let publication = Publication.make(number: number, sender: "$me", info: [], payload: bytes("$"))
            XCTAssertEqual(publication.numberStartsWithDollar, expected, number)
        }
    }

    func testAFrameParsesBackAsAPublish() {
        // A MSG frame has the same shape as a PUB frame; reusing the parser checks the framing end to end.
        let payload = bytes("line one\nline two\n")
        let info = [InfoPair(key: "a", value: "1"), InfoPair(key: "b.c", value: "x%20y")]
        let message = frame("A.b", payload, from: nil, info: info)
        let asPublish = bytes("PUB") + message.dropFirst(3)
        XCTAssertEqual(parseInAllModes(asPublish), [publish("A.b", payload, info: ["a=1", "b.c=x%20y"])])
    }
}
