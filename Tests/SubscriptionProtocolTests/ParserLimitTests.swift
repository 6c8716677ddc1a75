import SubscriptionWire
import TestSupport
import XCTest

@testable import SubscriptionProtocol

/// Line and payload limits, at and just over the edge.
final class ParserLimitTests: XCTestCase {
    let defaults = ProtocolLimits()

    func testDefaultLimits() {
        XCTAssertEqual(defaults.maxLine, 65_536)
        XCTAssertEqual(defaults.maxPayload, 1_048_576)
    }

    func testLineOfExactlyMaxLineIsAccepted() {
        let text = String(repeating: "x", count: defaults.maxLine - 5)
        assertParses("PING \(text)\n", [.success(.ping(text: text))], seeds: 0..<8)
        assertParses("PING \(text)\r\n", [.success(.ping(text: text))], seeds: 0..<8)
    }

    func testLineOfMaxLinePlusOneIsTooBig() {
        let text = String(repeating: "x", count: defaults.maxLine - 4)
        let results = parseInAllModes(bytes("PING \(text)\nPING\n"), seeds: 0..<8)
        let tooBig = ProtocolError(.tooBig, "line longer than 65536 bytes", closesConnection: true)
        XCTAssertEqual(results, [.failure(tooBig)])
    }

    func testTooLongLineIsReportedBeforeAnyLF() {
        var parser = CommandParser()
        parser.append(contentsOf: repeatElement(UInt8(ascii: "x"), count: defaults.maxLine))
        XCTAssertNil(parser.next(), "maxLine bytes may still end well")
        parser.append(contentsOf: [UInt8(ascii: "x")])
        let result = parser.next()
        XCTAssertEqual(failureCode(result!), .tooBig)
        XCTAssertTrue(parser.isFinished)
        XCTAssertEqual(parser.bufferedByteCount, 0)
    }

    func testMaxLineBytesAndACRWaitForTheLF() {
        for last: UInt8 in [0x0A, UInt8(ascii: "y")] {
            var parser = CommandParser(limits: ProtocolLimits(maxLine: 10, maxPayload: 10))
            parser.append(contentsOf: bytes("PING 12345\r"))
            XCTAssertNil(parser.next(), "10 bytes and a CR may still end in LF")
            parser.append(contentsOf: [last])
            if last == 0x0A {
                XCTAssertEqual(parser.next(), .success(.ping(text: "12345")))
            } else {
                XCTAssertEqual(failureCode(parser.next()!), .tooBig)
            }
        }
    }

    func testSmallLineLimit() {
        let limits = ProtocolLimits(maxLine: 10, maxPayload: 10)
        assertParses("PING 12345\n", [.success(.ping(text: "12345"))], limits: limits)
        assertParses("PING 12345\r\n", [.success(.ping(text: "12345"))], limits: limits)
        let results = parseInAllModes(bytes("PING 123456\n"), limits: limits)
        XCTAssertEqual(results.map(failureCode), [.tooBig])
        let unterminated = parseInAllModes(bytes("PING 123456"), limits: limits)
        XCTAssertEqual(unterminated.map(failureCode), [.tooBig])
    }

    func testPayloadOfExactlyMaxPayloadIsAccepted() {
        let limits = ProtocolLimits(maxLine: 100, maxPayload: 64)
        let payload = (0..<64).map { UInt8($0 * 4) }
        assertParses(bytes("PUB N 64\n") + payload + bytes("\n"), [publish("N", payload)], limits: limits)
        let over = parseInAllModes(bytes("PUB N 65\n") + payload + bytes("X\n"), limits: limits)
        XCTAssertEqual(
            over,
            [
                .failure(
                    ProtocolError(
                        .tooBig, "payload of 65 bytes is over the limit of 64 bytes",
                        closesConnection: true))
            ])
    }

    func testSendTextLimit() {
        let limits = ProtocolLimits(maxLine: 200, maxPayload: 10)
        let text = String(repeating: "t", count: 10)
        assertParses("SEND N \(text)\n", [send("N", text)], limits: limits)
        let over = parseInAllModes(bytes("SEND N \(text)t\nPING\n"), limits: limits)
        XCTAssertEqual(
            over,
            [
                .failure(
                    ProtocolError(
                        .tooBig, "text of 11 bytes is over the limit of 10 bytes",
                        closesConnection: true))
            ])
    }

    func testOneMebibytePayload() {
        var generator = SeededGenerator(seed: 42)
        let payload = (0..<defaults.maxPayload).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let input = bytes("PUB BIG 1048576\r\n") + payload + bytes("\r\nPING\n")
        let results = parseInAllModes(input, seeds: 0..<4, byteByByte: false)
        XCTAssertEqual(results, [publish("BIG", payload), .success(.ping(text: nil))])

        let over = parseInAllModes(bytes("PUB BIG 1048577\n") + payload, seeds: 0..<2, byteByByte: false)
        XCTAssertEqual(over.map(failureCode), [.tooBig])
    }

    func testOneMebibytePayloadOneByteAtATime() {
        let payload = (0..<defaults.maxPayload).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var parser = CommandParser()
        parser.append(contentsOf: bytes("PUB BIG 1048576\n"))
        var maxHeld = 0
        for byte in payload {
            withUnsafeBytes(of: byte) { parser.append($0) }
            if parser.next() != nil { return XCTFail("a result before the frame is complete") }
            maxHeld = max(maxHeld, parser.bufferedByteCount)
        }
        parser.append(contentsOf: bytes("\n"))
        XCTAssertEqual(parser.next(), publish("BIG", payload))
        XCTAssertEqual(maxHeld, 16 + payload.count)
        // Growth doubles at most, plus what malloc rounds up.
        XCTAssertLessThanOrEqual(parser.bufferCapacity, 2 * (16 + payload.count + 1) + 16_384)
    }

    func testReloadedLimitsApplyToTheNextLine() {
        var parser = CommandParser(limits: ProtocolLimits(maxLine: 100, maxPayload: 100))
        parser.append(contentsOf: bytes("PUB N 50\n"))
        XCTAssertNil(parser.next())
        // The announced PUB keeps its size; the next line meets the new limits.
        parser.limits = ProtocolLimits(maxLine: 8, maxPayload: 10)
        parser.append(contentsOf: repeatElement(UInt8(ascii: "p"), count: 50))
        parser.append(contentsOf: bytes("\nPING 1234\n"))
        XCTAssertEqual(parser.next(), publish("N", Array(repeating: UInt8(ascii: "p"), count: 50)))
        XCTAssertEqual(failureCode(parser.next()!), .tooBig)
    }
}
