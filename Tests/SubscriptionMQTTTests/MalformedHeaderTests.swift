import XCTest

@testable import SubscriptionMQTT

/// Fixed headers the specifications refuse (packet type, reserved flags, the place of CONNECT, lengths a type cannot
/// have), each found on the bytes it needs, fed whole, a byte at a time and in random chunks.
final class MalformedHeaderTests: XCTestCase {
    /// The valid low 4 bits of each type but PUBLISH.
    private let fixedFlags: [MQTTPacketType: UInt8] = [
        .connect: 0, .connack: 0, .puback: 0, .pubrec: 0, .pubrel: 2, .pubcomp: 0, .subscribe: 2, .suback: 0,
        .unsubscribe: 2, .unsuback: 0, .pingreq: 0, .pingresp: 0, .disconnect: 0, .auth: 0,
    ]

    func testPacketTypeZero() {
        assertFails([0x00], malformed, message: "type 0")
        assertFails([0x00, 0x00], malformed, setup: .client(.v5))
        assertFailsAfterConnect(.v311, [0x00, 0x00], malformed)
    }

    func testAuthIn311() {
        assertFailsAfterConnect(.v311, [0xF0, 0x00], malformed, message: "AUTH")
        assertFails([0xF0], malformed, setup: .client(.v311))
        // Until a version is known, packets are read as 3.1.1.
        assertFails([0xF0, 0x00], malformed, setup: DecoderSetup(version: nil, expectsConnectFirst: false))
        assertDecodesAfterConnect(.v5, [0xF0, 0x00], [.auth(MQTTAuth())])
    }

    func testReservedFlags() {
        for (type, valid) in fixedFlags {
            for flags: UInt8 in 0...15 where flags != valid {
                let first = type.rawValue << 4 | flags
                // The first byte alone is refused.
                if type == .connect {
                    assertFails([first], malformed, message: "flags")
                } else {
                    assertFailsAfterConnect(.v5, [first], malformed, message: "flags")
                    if type != .auth { assertFails([first, 0x00], malformed, setup: .client(.v311)) }
                }
            }
        }
    }

    func testPublishQoS3AndDupAtQoS0() {
        for version in [MQTTVersion.v311, .v5] {
            for first: UInt8 in [0x36, 0x37, 0x3E, 0x3F] {
                assertFailsAfterConnect(version, [first], malformed, message: "QoS 3")
            }
            for first: UInt8 in [0x38, 0x39] {
                assertFailsAfterConnect(version, [first], malformed, message: "DUP")
            }
        }
    }

    func testConnectMustComeFirst() {
        let others: [UInt8] = [0x20, 0x30, 0x40, 0x50, 0x62, 0x70, 0x82, 0x90, 0xA2, 0xB0, 0xC0, 0xD0, 0xE0, 0xF0]
        for first in others {
            assertFails([first], protocolError, message: "before CONNECT")
        }
        // A server's decoder refuses a second CONNECT, whatever its version.
        for version in [MQTTVersion.v311, .v5] {
            assertFailsAfterConnect(version, [0x10], protocolError, message: "second CONNECT")
            assertFailsAfterConnect(version, connectBytes(.v311), protocolError, message: "second CONNECT")
        }
        // A client's decoder takes packets without a CONNECT, but still no second one.
        assertDecodes([0xD0, 0x00], [.pingresp], setup: .client(.v311))
        assertFails(
            connectBytes(.v5) + connectBytes(.v5), protocolError,
            setup: DecoderSetup(expectsConnectFirst: false), before: [connectPacket(.v5)])
    }

    func testTheCONNECTSetsTheVersion() {
        var decoder = MQTTDecoder(maximumPacketSize: 1000)
        XCTAssertNil(decoder.version)
        connectBytes(.v5).withUnsafeBytes { decoder.append($0) }
        XCTAssertEqual(try decoder.next()?.get(), connectPacket(.v5))
        XCTAssertEqual(decoder.version, .v5)
        XCTAssertNil(decoder.next())
    }

    func testRemainingLengthInMoreThanFourBytes() {
        // Refused on the fourth length byte: the fifth never needs to come.
        assertFailsAfterConnect(.v5, [0x30, 0xFF, 0xFF, 0xFF, 0xFF], malformed, message: "more than 4 bytes")
        assertFailsAfterConnect(.v311, [0x30, 0x80, 0x80, 0x80, 0x80, 0x01], malformed, message: "more than 4 bytes")
        assertFails([0x10, 0x80, 0x80, 0x80, 0x80], malformed)
    }

    func testLengthsATypeCannotHave() {
        // Refused right after the length, before any body byte.
        for version in [MQTTVersion.v311, .v5] {
            assertFailsAfterConnect(version, [0xC0, 0x01], malformed, message: "PINGREQ")
            assertFails([0xD0, 0x7F], malformed, setup: .client(version), message: "PINGRESP")
            for first: UInt8 in [0x40, 0x50, 0x62, 0x70] {
                assertFailsAfterConnect(version, [first, 0x01], malformed, message: "remaining length of 1")
                assertFailsAfterConnect(version, [first, 0x00], malformed, message: "remaining length of 0")
            }
            assertFails([0xB0, 0x01], malformed, setup: .client(version))
        }
        assertFailsAfterConnect(.v311, [0xE0, 0x01], malformed, message: "DISCONNECT")
        for first: UInt8 in [0x40, 0x50, 0x62, 0x70] {
            assertFailsAfterConnect(.v311, [first, 0x03], malformed, message: "must be 2")
        }
        assertFails([0x20, 0x03], malformed, setup: .client(.v311), message: "must be 2")
        assertFails([0x20, 0x02], malformed, setup: .client(.v5), message: "at least 3")
        assertFails([0xB0, 0x03], malformed, setup: .client(.v311), message: "must be 2")
    }

    func testAFailureFinishesTheDecoder() {
        var decoder = MQTTDecoder(maximumPacketSize: 1000)
        let bytes = connectBytes(.v311) + [0x00, 0x00] + MQTTEncoder.encode(.pingreq, version: .v311)
        bytes.withUnsafeBytes { decoder.append($0) }
        XCTAssertEqual(try decoder.next()?.get(), connectPacket(.v311))
        guard case .failure(let error) = decoder.next() else { return XCTFail("no failure") }
        XCTAssertEqual(error.reasonCode, malformed)
        XCTAssertEqual(error.description, "malformed packet (0x81): packet type 0 is reserved")
        XCTAssertTrue(decoder.isFinished)
        XCTAssertNil(decoder.next())
        // Appends are dropped, through both entry points.
        ([0xC0, 0x00] as [UInt8]).withUnsafeBytes { decoder.append($0) }
        decoder.withWritableTail(minimumCapacity: 2) { space in
            space[0] = 0xC0
            space[1] = 0x00
            return 2
        }
        XCTAssertEqual(decoder.bufferedByteCount, 0)
        XCTAssertNil(decoder.next())
    }
}
