import XCTest

@testable import SubscriptionProtocol
import TestSupport

/// The `MSG` push frame: exact bytes and exact size.
final class MessageFrameTests: XCTestCase {
    /// Writes the frame into a buffer with guard bytes around it and checks nothing outside was touched.
    func frame(_ number: String, _ payload: [UInt8], from: String?, file: StaticString = #filePath,
               line: UInt = #line) -> [UInt8] {
        let size = ReplyEncoder.messageFrameSize(number: number, payloadCount: payload.count, from: from)
        var storage = [UInt8](repeating: 0xEE, count: size + 16)
        let written = storage.withUnsafeMutableBytes { raw in
            payload.withUnsafeBytes { source in
                ReplyEncoder.writeMessageFrame(number: number, payload: source, from: from, to: raw.baseAddress! + 8)
            }
        }
        XCTAssertEqual(written, size, "messageFrameSize must equal the bytes written", file: file, line: line)
        XCTAssertEqual(Array(storage[..<8]), Array(repeating: 0xEE, count: 8), file: file, line: line)
        XCTAssertEqual(Array(storage[(8 + size)...]), Array(repeating: 0xEE, count: 8), file: file, line: line)
        let made = payload.withUnsafeBytes { ReplyEncoder.messageFrame(number: number, payload: $0, from: from) }
        XCTAssertEqual(made, Array(storage[8..<(8 + size)]), file: file, line: line)
        return Array(storage[8..<(8 + written)])
    }

    func testFrameWithoutFrom() {
        XCTAssertEqual(frame("SCIENCE", bytes("V1.0"), from: nil), bytes("MSG SCIENCE 4\nV1.0\n"))
    }

    func testFrameWithFrom() {
        XCTAssertEqual(frame("SCIENCE.physics", bytes("V2.0!"), from: "pub1"),
                       bytes("MSG SCIENCE.physics 5 from=pub1\nV2.0!\n"))
    }

    func testEmptyPayload() {
        XCTAssertEqual(frame("A", [], from: nil), bytes("MSG A 0\n\n"))
        XCTAssertEqual(frame("A", [], from: "Zoë"), bytes("MSG A 0 from=Zoë\n\n"))
    }

    func testBinaryPayloadAndUnicodeNumber() {
        let payload = (0...255).map { UInt8($0) }
        XCTAssertEqual(frame("ÉTÉ.x", payload, from: nil), bytes("MSG ÉTÉ.x 256\n") + payload + [0x0A])
    }

    func testSizeMatchesForManyLengths() {
        var generator = SeededGenerator(seed: 3)
        for count in [1, 9, 10, 11, 99, 100, 999, 1000, 10_000, 65_536, 1_048_576] {
            let payload = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let from: String? = count % 2 == 0 ? "client-\(count)" : nil
            let header = "MSG N.\(count) \(count)" + (from.map { " from=\($0)" } ?? "") + "\n"
            XCTAssertEqual(frame("N.\(count)", payload, from: from), bytes(header) + payload + [0x0A], "\(count)")
        }
    }

    func testAFrameParsesBackAsAPublish() {
        // A MSG frame has the same shape as a PUB frame; reusing the parser checks the framing end to end.
        let payload = bytes("line one\nline two\n")
        let message = frame("A.b", payload, from: nil)
        let asPublish = bytes("PUB") + message.dropFirst(3)
        XCTAssertEqual(parseInAllModes(asPublish), [publish("A.b", payload)])
    }
}
