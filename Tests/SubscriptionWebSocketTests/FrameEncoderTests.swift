import XCTest

@testable import SubscriptionWebSocket

/// The server's frames: headers at the length boundaries, control frames, and a round trip through the decoder.
final class FrameEncoderTests: XCTestCase {
    func header(_ opcode: WebSocketOpcode, _ count: Int, isFinal: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = []
        WebSocketFrameEncoder.appendHeader(opcode: opcode, payloadCount: count, isFinal: isFinal, to: &bytes)
        return bytes
    }

    func testHeadersAtTheLengthBoundaries() {
        XCTAssertEqual(header(.binary, 0), [0x82, 0x00])
        XCTAssertEqual(header(.text, 125), [0x81, 0x7D])
        XCTAssertEqual(header(.binary, 126), [0x82, 0x7E, 0x00, 0x7E])
        XCTAssertEqual(header(.binary, 65535), [0x82, 0x7E, 0xFF, 0xFF])
        XCTAssertEqual(header(.binary, 65536), [0x82, 0x7F, 0, 0, 0, 0, 0, 0x01, 0x00, 0x00])
        XCTAssertEqual(header(.text, 0x0123_4567_89AB), [0x81, 0x7F, 0, 0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xAB])
        XCTAssertEqual(header(.text, 5, isFinal: false), [0x01, 0x05])
        XCTAssertEqual(header(.continuation, 5), [0x80, 0x05])
        for (count, size) in [(0, 2), (125, 2), (126, 4), (65535, 4), (65536, 10)] {
            XCTAssertEqual(WebSocketFrameEncoder.headerCount(payloadCount: count), size, "\(count)")
        }
    }

    func testWriteHeaderIntoASmallBuffer() {
        var storage = [UInt8](repeating: 0xEE, count: WebSocketFrameEncoder.maxHeaderCount + 2)
        let count = storage.withUnsafeMutableBytes {
            WebSocketFrameEncoder.writeHeader(opcode: .binary, payloadCount: 300, into: $0)
        }
        XCTAssertEqual(count, 4)
        XCTAssertEqual(storage, [0x82, 0x7E, 0x01, 0x2C] + [UInt8](repeating: 0xEE, count: 8))
    }

    func testControlFrames() {
        XCTAssertEqual(WebSocketFrameEncoder.pingFrame(payload: bytes("Hello")), [0x89, 0x05] + bytes("Hello"))
        XCTAssertEqual(WebSocketFrameEncoder.pongFrame(payload: bytes("Hello")), [0x8A, 0x05] + bytes("Hello"))
        XCTAssertEqual(WebSocketFrameEncoder.closeFrame(code: nil, reason: "ignored"), [0x88, 0x00])
        XCTAssertEqual(WebSocketFrameEncoder.closeFrame(code: .normalClosure), [0x88, 0x02, 0x03, 0xE8])
        XCTAssertEqual(
            WebSocketFrameEncoder.closeFrame(code: .messageTooBig, reason: "too big"),
            [0x88, 0x09, 0x03, 0xF1] + bytes("too big"))
    }

    func testALongCloseReasonIsCutAtACharacter() {
        // 61 two-byte characters are 122 bytes; one more would pass 123.
        let reason = String(repeating: "é", count: 100)
        let frame = WebSocketFrameEncoder.closeFrame(code: .protocolError, reason: reason)
        XCTAssertEqual(frame[1], 2 + 122)
        XCTAssertEqual(Array(frame[4...]), bytes(String(repeating: "é", count: 61)))
        let ascii = WebSocketFrameEncoder.closeFrame(code: .protocolError, reason: String(repeating: "x", count: 200))
        XCTAssertEqual(ascii.count, 2 + 125)
    }

    /// What the server sends, masked as a client would send it, decodes to what was framed.
    func testRoundTripThroughTheDecoder() {
        for count in [0, 1, 125, 126, 65535, 65536, 70_000] {
            let payload = (0..<count).map { UInt8(truncatingIfNeeded: $0 * 13) }
            let frame = WebSocketFrameEncoder.frame(opcode: .binary, payload: payload)
            let headerCount = WebSocketFrameEncoder.headerCount(payloadCount: count)
            XCTAssertEqual(frame.count, headerCount + count)
            var masked = frame[..<headerCount].map { $0 }
            masked[1] |= 0x80
            masked += exampleMask
            masked += payload.enumerated().map { $0.element ^ exampleMask[$0.offset % 4] }
            XCTAssertEqual(masked, clientFrame(0x2, payload))
            assertDecodes(masked, count == 0 ? [] : [data(payload)], seeds: 0..<3)
        }
        let close = WebSocketFrameEncoder.closeFrame(code: WebSocketCloseCode(rawValue: 4321), reason: "fin é")
        var masked = [close[0], close[1] | 0x80] + exampleMask
        masked += close[2...].enumerated().map { $0.element ^ exampleMask[$0.offset % 4] }
        assertDecodes(masked, [.close(code: WebSocketCloseCode(rawValue: 4321), reason: "fin é")])
    }

    func testOpcodesAndCloseCodes() {
        XCTAssertEqual(WebSocketOpcode.allCases.filter(\.isControl), [.close, .ping, .pong])
        let allowed = (0...UInt16(5000)).filter { WebSocketCloseCode(rawValue: $0).isAllowedInCloseFrame }
        XCTAssertEqual(allowed.count, 4 + 8 + 2000)
        XCTAssertFalse(WebSocketCloseCode.noStatusReceived.isAllowedInCloseFrame)
        XCTAssertFalse(WebSocketCloseCode.abnormalClosure.isAllowedInCloseFrame)
        XCTAssertFalse(WebSocketCloseCode(rawValue: 1015).isAllowedInCloseFrame)
    }
}
