import XCTest

@testable import SubscriptionWebSocket

/// RFC 6455 section 5.7's examples, and the well-formed streams around them; every input fed whole, a byte at a
/// time and in random chunks.
final class RFCExampleTests: XCTestCase {
    /// The masked "Hello" of section 5.7, byte for byte.
    static let maskedHello: [UInt8] = [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58]

    func testTheTestFramesAreSpelledAsTheRFCSpellsThem() {
        XCTAssertEqual(textFrame("Hello"), Self.maskedHello)
        XCTAssertEqual(clientFrame(0x1, bytes("Hello"), mask: nil), [0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])
        XCTAssertEqual(
            Array(clientFrame(0x2, Array(repeating: 7, count: 256), mask: nil).prefix(4)), [0x82, 0x7E, 1, 0])
        XCTAssertEqual(
            Array(clientFrame(0x2, Array(repeating: 7, count: 65536), mask: nil).prefix(10)),
            [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0])
    }

    func testMaskedHelloInOneFrame() {
        assertDecodes(Self.maskedHello, [data("Hello")])
    }

    func testUnmaskedHelloIsRefusedFromAClient() {
        assertFails([0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F], .unmaskedFrame, code: 1002)
    }

    func testFragmentedHelloMasked() {
        // The RFC's example is unmasked (0x01 0x03 "Hel", 0x80 0x02 "lo"); a client must mask it.
        let input = clientFrame(0x1, bytes("Hel"), fin: false) + clientFrame(0x0, bytes("lo"))
        XCTAssertEqual(Array(input.prefix(2)), [0x01, 0x83])
        XCTAssertEqual(Array(input[9..<11]), [0x80, 0x82])
        assertDecodes(input, [data("Hello")])
        // The RFC's bytes as they are: refused at the first frame.
        assertFails([0x01, 0x03, 0x48, 0x65, 0x6C, 0x80, 0x02, 0x6C, 0x6F], .unmaskedFrame, code: 1002)
    }

    func testPingAndMaskedPong() {
        assertDecodes(clientFrame(0x9, bytes("Hello")), [.ping(bytes("Hello")[...])])
        assertDecodes([0x8A, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58], [.pong(bytes("Hello")[...])])
        assertDecodes(clientFrame(0x9, []) + clientFrame(0xA, []), [.ping([]), .pong([])])
    }

    func testBinary256BytesWith16BitLength() {
        let payload = (0..<256).map { UInt8($0) }
        let input = clientFrame(0x2, payload)
        XCTAssertEqual(Array(input.prefix(4)), [0x82, 0xFE, 0x01, 0x00])
        assertDecodes(input, [data(payload)])
    }

    func testBinary64KiBWith64BitLength() {
        let payload = (0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let input = clientFrame(0x2, payload)
        XCTAssertEqual(Array(input.prefix(10)), [0x82, 0xFF, 0, 0, 0, 0, 0, 1, 0, 0])
        assertDecodes(input, [data(payload)], seeds: 0..<8)
    }

    func testNonMinimalLengthsAreAccepted() {
        assertDecodes(clientFrame(0x2, bytes("abc"), length: .sixteen), [data("abc")])
        assertDecodes(clientFrame(0x2, bytes("abc"), length: .sixtyFour), [data("abc")])
        assertDecodes(clientFrame(0x1, [], length: .sixtyFour), [])
    }

    func testEveryMaskOffsetUnmasks() {
        // Payloads of every length up to 40, cut anywhere, with a key whose bytes all differ: the key's rotation
        // across appends and the eight-byte path must agree.
        for count in 0...40 {
            let payload = (0..<count).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }
            let input = clientFrame(0x2, payload, mask: [0x01, 0x23, 0xC5, 0xF7])
            assertDecodes(input, count == 0 ? [] : [data(payload)], seeds: 0..<10)
        }
    }

    func testControlFramesBetweenFragments() {
        let input =
            clientFrame(0x1, bytes("PUB A 3\n"), fin: false) + clientFrame(0x9, bytes("p1"))
            + clientFrame(0x0, bytes("abc"), fin: false) + clientFrame(0xA, bytes("p2"))
            + clientFrame(0x0, bytes("\n")) + clientFrame(0x2, bytes("PING\n"))
        assertDecodes(
            input,
            [data("PUB A 3\n"), .ping(bytes("p1")[...]), data("abc"), .pong(bytes("p2")[...]), data("\nPING\n")])
    }

    func testEmptyFramesGiveNoData() {
        let input =
            clientFrame(0x1, [], fin: false) + clientFrame(0x0, [], fin: false) + clientFrame(0x0, bytes("x"))
            + clientFrame(0x2, [])
        assertDecodes(input, [data("x")])
    }

    func testCloseFrames() {
        assertDecodes(clientFrame(0x8, []), [.close(code: nil, reason: "")])
        assertDecodes(clientFrame(0x8, [0x03, 0xE8]), [.close(code: .normalClosure, reason: "")])
        assertDecodes(
            clientFrame(0x8, [0x0F, 0xA0] + bytes("bye é")),
            [.close(code: WebSocketCloseCode(rawValue: 4000), reason: "bye é")])
        for code: UInt16 in [1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 3000, 3999, 4999] {
            let frame = clientFrame(0x8, [UInt8(code >> 8), UInt8(code & 0xFF)])
            assertDecodes(frame, [.close(code: WebSocketCloseCode(rawValue: code), reason: "")], seeds: 0..<3)
        }
    }

    func testBytesAfterACloseAreDropped() {
        let input = textFrame("a") + clientFrame(0x8, [0x03, 0xE8]) + textFrame("b") + [0xFF, 0xFF]
        assertDecodes(input, [data("a"), .close(code: .normalClosure, reason: "")])
    }

    func testAMessageMayCloseAfterAPingInsideIt() {
        let input = clientFrame(0x2, bytes("ab"), fin: false) + clientFrame(0x8, [])
        assertDecodes(input, [data("ab"), .close(code: nil, reason: "")])
    }

    func testMessageLimitCountsEveryFragment() {
        let limits = WebSocketLimits(maxFramePayload: 10, maxMessagePayload: 12)
        let fits = clientFrame(0x2, Array(repeating: 1, count: 10), fin: false) + clientFrame(0x0, [2, 2])
        assertDecodes(
            fits + fits, [data(Array(repeating: 1, count: 10) + [2, 2] + Array(repeating: 1, count: 10) + [2, 2])],
            limits: limits)
        let frameAtLimit = clientFrame(0x2, Array(repeating: 1, count: 10))
        assertDecodes(frameAtLimit, [data(Array(repeating: 1, count: 10))], limits: limits)
    }

    func testDecoderCanReleaseItsStorageWhenIdle() {
        var decoder = WebSocketFrameDecoder(limits: WebSocketLimits(maxFramePayload: 100))
        decoder.append(contentsOf: textFrame("hi"))
        XCTAssertEqual(decoder.next(), data("hi"))
        XCTAssertNil(decoder.next())
        XCTAssertGreaterThan(decoder.bufferCapacity, 0)
        decoder.releaseStorageIfEmpty()
        XCTAssertEqual(decoder.bufferCapacity, 0)
        decoder.append(contentsOf: textFrame("yo"))
        XCTAssertEqual(decoder.next(), data("yo"))
    }

    func testInsideMessageIsReported() {
        var decoder = WebSocketFrameDecoder(limits: WebSocketLimits(maxFramePayload: 100))
        decoder.append(contentsOf: textFrame("a", fin: false))
        XCTAssertEqual(decoder.next(), data("a"))
        XCTAssertTrue(decoder.isInsideMessage)
        decoder.append(contentsOf: clientFrame(0x0, bytes("b")))
        XCTAssertEqual(decoder.next(), data("b"))
        XCTAssertFalse(decoder.isInsideMessage)
    }
}
