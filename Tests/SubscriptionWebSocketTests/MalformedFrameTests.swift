import XCTest

@testable import SubscriptionWebSocket

/// Every frame RFC 6455 (or the limits) refuses, with the close code it names, fed whole, a byte at a time and in
/// random chunks; what came before the bad frame is still handed on.
final class MalformedFrameTests: XCTestCase {
    func testReservedBits() {
        for rsv: UInt8 in 1...7 {
            assertFails(clientFrame(0x1, bytes("a"), rsv: rsv), .reservedBits(rsv << 4), code: 1002)
        }
        assertFails(
            textFrame("ok") + clientFrame(0x9, [], rsv: 4), .reservedBits(0x40), code: 1002, before: [data("ok")])
    }

    func testReservedOpcodes() {
        for opcode: UInt8 in [3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF] {
            assertFails(clientFrame(opcode, bytes("a")), .reservedOpcode(opcode), code: 1002)
        }
    }

    func testUnmaskedFrames() {
        for opcode: UInt8 in [0x1, 0x2, 0x8, 0x9, 0xA] {
            assertFails(clientFrame(opcode, [], mask: nil), .unmaskedFrame, code: 1002)
        }
        assertFails(
            textFrame("a") + clientFrame(0x1, bytes("b"), mask: nil), .unmaskedFrame, code: 1002, before: [data("a")])
    }

    func testFragmentedControlFrames() {
        for opcode: UInt8 in [0x8, 0x9, 0xA] {
            assertFails(clientFrame(opcode, [], fin: false), .fragmentedControlFrame, code: 1002)
        }
    }

    func testControlFramesOver125Bytes() {
        for opcode: UInt8 in [0x8, 0x9, 0xA] {
            assertFails(clientFrame(opcode, Array(repeating: 0x41, count: 126)), .controlFrameTooLong, code: 1002)
            assertFails(
                clientFrame(opcode, Array(repeating: 0x41, count: 200), length: .sixtyFour), .controlFrameTooLong,
                code: 1002)
            // 125 is fine (a close frame's payload starting with a valid code).
            let payload: [UInt8] = (opcode == 0x8 ? [0x03, 0xE8] : [0x41, 0x41]) + Array(repeating: 0x41, count: 123)
            let events = decodeInAllModes(clientFrame(opcode, payload), seeds: 0..<4)
            XCTAssertEqual(events.count, 1)
            if case .failure(let violation) = events.first { XCTFail("125 bytes refused: \(violation)") }
        }
        // Refused on its header alone: the payload never comes.
        assertFails([0x89, 0xFE, 0x00, 0x7E], .controlFrameTooLong, code: 1002)
    }

    func testContinuationWithoutAMessage() {
        assertFails(clientFrame(0x0, bytes("a")), .continuationWithoutMessage, code: 1002)
        assertFails(
            textFrame("a") + clientFrame(0x0, bytes("b")), .continuationWithoutMessage, code: 1002, before: [data("a")])
    }

    func testNewDataFrameInsideAMessage() {
        assertFails(
            textFrame("a", fin: false) + textFrame("b"), .dataFrameInsideMessage, code: 1002, before: [data("a")])
        assertFails(
            textFrame("a", fin: false) + clientFrame(0x2, bytes("b")), .dataFrameInsideMessage, code: 1002,
            before: [data("a")])
    }

    func testLengthWithTheTopBitSet() {
        assertFails(clientFrame(0x2, [], length: .raw64(1 << 63)), .lengthOutOfRange, code: 1002)
        assertFails(clientFrame(0x2, [], length: .raw64(.max)), .lengthOutOfRange, code: 1002)
    }

    func testClosePayloads() {
        assertFails(clientFrame(0x8, [0x03]), .closePayloadTooShort, code: 1002)
        for code: UInt16 in [0, 1, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535] {
            assertFails(clientFrame(0x8, [UInt8(code >> 8), UInt8(code & 0xFF)]), .invalidCloseCode(code), code: 1002)
        }
        assertFails(clientFrame(0x8, [0x03, 0xE8, 0xFF]), .invalidCloseReason, code: 1007)
        // A reason ending inside a character.
        assertFails(clientFrame(0x8, [0x03, 0xE8, 0xC3]), .invalidCloseReason, code: 1007)
        // A surrogate, CESU-style.
        assertFails(clientFrame(0x8, [0x03, 0xE8, 0xED, 0xA0, 0x80]), .invalidCloseReason, code: 1007)
    }

    func testFrameOverTheLimit() {
        let limits = WebSocketLimits(maxFramePayload: 100)
        assertFails(clientFrame(0x2, Array(repeating: 1, count: 101)), .frameTooBig(101), code: 1009, limits: limits)
        assertFails(
            clientFrame(0x1, Array(repeating: 0x41, count: 70_000)), .frameTooBig(70_000), code: 1009, limits: limits)
        // Refused on its header alone: a 2^62-byte announcement holds nothing.
        assertFails(clientFrame(0x2, [], length: .raw64(1 << 62)), .frameTooBig(1 << 62), code: 1009, limits: limits)
        // A control frame is not a data frame: 125 bytes pass a limit of 100.
        assertDecodes(
            clientFrame(0x9, Array(repeating: 1, count: 125)), [.ping(Array(repeating: 1, count: 125)[...])],
            limits: limits, seeds: 0..<4)
    }

    func testMessageOverTheLimit() {
        let limits = WebSocketLimits(maxFramePayload: 100, maxMessagePayload: 150)
        let input =
            clientFrame(0x2, Array(repeating: 1, count: 100), fin: false)
            + clientFrame(0x0, Array(repeating: 2, count: 50), fin: false)
            + clientFrame(0x0, [3])
        assertFails(
            input, .messageTooBig(151), code: 1009,
            before: [data(Array(repeating: 1, count: 100) + Array(repeating: 2, count: 50))], limits: limits)
    }

    func testInvalidUTF8InATextMessage() {
        // The bytes before the first bad one are handed on, then the failure.
        assertFails(
            clientFrame(0x1, bytes("abc") + [0xFF] + bytes("def")), .invalidUTF8, code: 1007, before: [data("abc")])
        assertFails(clientFrame(0x1, [0xC0, 0x80]), .invalidUTF8, code: 1007)
        // Overlong, surrogate, above U+10FFFF.
        assertFails(clientFrame(0x1, [0xE0, 0x80, 0x80]), .invalidUTF8, code: 1007, before: [data([0xE0])])
        assertFails(clientFrame(0x1, [0xED, 0xA0, 0x80]), .invalidUTF8, code: 1007, before: [data([0xED])])
        assertFails(clientFrame(0x1, [0xF4, 0x90, 0x80, 0x80]), .invalidUTF8, code: 1007, before: [data([0xF4])])
        assertFails(clientFrame(0x1, [0xF5, 0x80, 0x80, 0x80]), .invalidUTF8, code: 1007)
        // A binary message is not checked.
        assertDecodes(clientFrame(0x2, [0xFF, 0xC0]), [data([0xFF, 0xC0])])
    }

    func testATextMessageMayNotEndInsideACharacter() {
        assertFails(
            clientFrame(0x1, bytes("a") + [0xC3]), .invalidUTF8, code: 1007, before: [data(bytes("a") + [0xC3])])
        let split = textFrame("x", fin: false) + clientFrame(0x0, [0xE2, 0x82])
        assertFails(split, .invalidUTF8, code: 1007, before: [data(bytes("x") + [0xE2, 0x82])])
    }

    func testUTF8SplitAcrossFragments() {
        // "€" is E2 82 AC; "𝄞" is F0 9D 84 9E: each cut at every place, with a ping between the pieces.
        for character in ["é", "€", "𝄞"] {
            let encoded = bytes(character)
            for cut in 1..<encoded.count {
                let input =
                    clientFrame(0x1, Array(encoded[..<cut]), fin: false) + clientFrame(0x9, [])
                    + clientFrame(0x0, Array(encoded[cut...]))
                assertDecodes(
                    input, [data(Array(encoded[..<cut])), .ping([]), data(Array(encoded[cut...]))], seeds: 0..<8)
                // The same cut, with a bad continuation byte in the second fragment.
                var bad = Array(encoded[cut...])
                bad[0] = 0x41
                assertFails(
                    clientFrame(0x1, Array(encoded[..<cut]), fin: false) + clientFrame(0x0, bad), .invalidUTF8,
                    code: 1007,
                    before: [data(Array(encoded[..<cut]))])
            }
        }
        // The validator's state is per message: a new message starts at a character boundary.
        assertDecodes(textFrame("é") + textFrame("€"), [data("é€")])
    }

    func testTheDecoderStaysFailed() {
        var decoder = WebSocketFrameDecoder(limits: WebSocketLimits(maxFramePayload: 100))
        decoder.append(contentsOf: clientFrame(0x1, bytes("a"), mask: nil))
        XCTAssertEqual(decoder.next(), .failure(.unmaskedFrame))
        XCTAssertTrue(decoder.isFinished)
        decoder.append(contentsOf: textFrame("b"))
        XCTAssertNil(decoder.next())
        XCTAssertEqual(decoder.bufferedByteCount, 0)
    }

    func testEveryViolationNamesItsCloseCode() {
        let expected: [(WebSocketViolation, UInt16)] = [
            (.reservedBits(0x40), 1002), (.reservedOpcode(3), 1002), (.unmaskedFrame, 1002),
            (.fragmentedControlFrame, 1002),
            (.controlFrameTooLong, 1002), (.continuationWithoutMessage, 1002), (.dataFrameInsideMessage, 1002),
            (.lengthOutOfRange, 1002), (.closePayloadTooShort, 1002), (.invalidCloseCode(1005), 1002),
            (.invalidUTF8, 1007),
            (.invalidCloseReason, 1007), (.frameTooBig(1), 1009), (.messageTooBig(1), 1009),
        ]
        for (violation, code) in expected {
            XCTAssertEqual(violation.closeCode.rawValue, code, "\(violation)")
            XCTAssertLessThanOrEqual(violation.description.utf8.count, 123)
            XCTAssertTrue(violation.description.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F })
        }
    }
}
