import TestSupport
import XCTest

@testable import SubscriptionMQTT

/// The remaining length at its boundaries (section 1.5.5's table), the maximum packet size, and DISCONNECT's and
/// AUTH's lengths.
final class RemainingLengthTests: XCTestCase {
    /// Section 1.5.5's table: each boundary value and its bytes.
    private let boundaries: [(Int, [UInt8])] = [
        (0, [0x00]), (127, [0x7F]), (128, [0x80, 0x01]), (16_383, [0xFF, 0x7F]), (16_384, [0x80, 0x80, 0x01]),
        (2_097_151, [0xFF, 0xFF, 0x7F]), (2_097_152, [0x80, 0x80, 0x80, 0x01]),
        (268_435_455, [0xFF, 0xFF, 0xFF, 0x7F]),
    ]

    func testTheEncoderWritesTheTable() {
        for (value, bytes) in boundaries {
            XCTAssertEqual(variableByteInteger(value), bytes, "\(value)")
            XCTAssertEqual(MQTTEncoder.variableByteIntegerCount(value), bytes.count, "\(value)")
            // A PUBLISH header announcing this remaining length: topic "t" (3 bytes) and the payload.
            guard value >= 3 else { continue }
            var header: [UInt8] = []
            MQTTEncoder.publishHeader(
                topic: "t".utf8, qos: .atMostOnce, retain: false, dup: false, packetID: nil, properties: nil,
                payloadCount: value - 3, version: .v311, into: &header)
            XCTAssertEqual(header, [0x30] + bytes + [0x00, 0x01, 0x74], "\(value)")
            XCTAssertEqual(
                MQTTEncoder.encodedPublishCount(
                    topicCount: 1, packetID: false, propertiesCount: nil, payloadCount: value - 3),
                1 + bytes.count + value)
        }
    }

    func testPacketsAtEachBoundaryDecode() {
        // PINGREQ: a remaining length of 0.
        assertDecodesAfterConnect(.v311, [0xC0, 0x00], [.pingreq])
        for (value, _) in boundaries where value >= 3 && value <= 2_097_152 {
            let publish = MQTTPacket.publish(MQTTPublish(topic: "t", payload: Fixtures.payload(value - 3)))
            let bytes = MQTTEncoder.encode(publish, version: .v311)
            XCTAssertEqual(bytes.count, 1 + MQTTEncoder.variableByteIntegerCount(value) + value)
            // The megabyte packets whole and in random chunks; the others a byte at a time too.
            let modes: [FeedMode] =
                value > 100_000 ? [.allAtOnce, .randomChunks(seed: 5)] : FeedMode.all
            assertDecodes(connectBytes(.v311) + bytes, [connectPacket(.v311), publish], modes: modes)
        }
    }

    func testTheLargestRemainingLength() {
        // 268,435,455 bytes are not built: the header alone is waited on, or refused when the packet is too large.
        let header: [UInt8] = [0x30, 0xFF, 0xFF, 0xFF, 0x7F]
        for mode in FeedMode.all {
            var decoder = MQTTDecoder(maximumPacketSize: 268_435_460)
            decoder.expectsConnectFirst = false
            mode.feed(header + string("t"), to: &decoder) { XCTAssertNil($0.next()) }
            XCTAssertEqual(decoder.bufferedByteCount, header.count + 3)
        }
        assertFails(
            header, packetTooLarge, setup: DecoderSetup(maximumPacketSize: 268_435_459, expectsConnectFirst: false),
            message: "268435460 bytes")
    }

    func testAPacketOverTheMaximumIsRefusedAfterItsLength() {
        let setup = DecoderSetup(maximumPacketSize: 100)
        let ping = MQTTEncoder.encode(.pingreq, version: .v311)
        // A PUBLISH of 1 + 1 + 99 = 101 bytes: its header is enough to refuse it, and its body is never waited on.
        let header: [UInt8] = [0x30, 99]
        assertFails(
            connectBytes(.v311) + ping + header, packetTooLarge, setup: setup,
            before: [connectPacket(.v311), .pingreq],
            message: "101 bytes")
        let whole = header + string("t") + Array(repeating: 0x41, count: 96)
        assertFails(connectBytes(.v311) + whole, packetTooLarge, setup: setup, before: [connectPacket(.v311)])
        // 100 bytes pass.
        let fits = [0x30, 97] + string("t") + Array(repeating: 0x41, count: 94)
        assertDecodes(
            connectBytes(.v311) + fits,
            [connectPacket(.v311), .publish(MQTTPublish(topic: "t", payload: Array(repeating: 0x41, count: 94)[...]))],
            setup: setup)
        // A length that cannot fit is refused before its last byte: 1 + 3 length bytes is already more than 3.
        assertFails(
            [0x30, 0x80, 0x80], packetTooLarge, setup: DecoderSetup(maximumPacketSize: 3, expectsConnectFirst: false))
        assertFails([0x30], packetTooLarge, setup: DecoderSetup(maximumPacketSize: 1, expectsConnectFirst: false))
        // The first CONNECT too.
        assertFails([0x10, 0x7F], packetTooLarge, setup: setup)
    }

    func testTheMaximumMayChangeBetweenPackets() {
        var decoder = MQTTDecoder(maximumPacketSize: 1000)
        let bytes = connectBytes(.v311) + MQTTEncoder.encode(.pingreq, version: .v311)
        bytes.withUnsafeBytes { decoder.append($0) }
        XCTAssertEqual(try decoder.next()?.get(), connectPacket(.v311))
        decoder.maximumPacketSize = 1
        guard case .failure(let error) = decoder.next() else { return XCTFail("PINGREQ passed a maximum of 1") }
        XCTAssertEqual(error.reasonCode, packetTooLarge)
    }

    func testDisconnectAndAuthLengths() {
        for (first, type) in [(UInt8(0xE0), "DISCONNECT"), (0xF0, "AUTH")] {
            // Reason code and properties, then a byte left over.
            assertFailsAfterConnect(
                .v5, [first, 0x03, 0x00, 0x00, 0xFF], malformed, message: "after the end of \(type)")
            // A property length past the end.
            assertFailsAfterConnect(.v5, [first, 0x02, 0x00, 0x01], malformed, message: "runs past")
        }
        assertDecodesAfterConnect(
            .v5, [0xE0, 0x01, 0x8B, 0xE0, 0x02, 0x04, 0x00, 0xF0, 0x01, 0x18],
            [
                .disconnect(MQTTDisconnect(reasonCode: 0x8B)), .disconnect(MQTTDisconnect(reasonCode: 0x04)),
                .auth(MQTTAuth(reasonCode: 0x18)),
            ])
    }
}
