import XCTest

@testable import SubscriptionMQTT

/// The decoder's buffer: a PUBLISH's payload is a slice of it (no copy) that stays valid until the next append,
/// the bytes of a packet not yet whole are held and counted, and an idle decoder gives its storage back.
final class DecoderBufferTests: XCTestCase {
    func testThePayloadIsASliceOfTheBufferValidUntilTheNextAppend() throws {
        var decoder = MQTTDecoder(maximumPacketSize: 1 << 20)
        let first = MQTTPacket.publish(MQTTPublish(topic: "a", payload: Fixtures.payload(1000)))
        let second = MQTTPacket.publish(MQTTPublish(topic: "b", payload: Fixtures.payload(2000)))
        let bytes =
            connectBytes(.v311) + MQTTEncoder.encode(first, version: .v311)
            + MQTTEncoder.encode(second, version: .v311)
        bytes.withUnsafeBytes { decoder.append($0) }
        _ = try decoder.next()?.get()
        guard case .publish(let publish) = try decoder.next()?.get() else { return XCTFail("no PUBLISH") }
        // The payload's bytes are the decoder's own.
        let payloadAddress = publish.payload.withUnsafeBufferPointer { $0.baseAddress }
        let bufferAddress = decoder.input.bytes.withUnsafeBufferPointer { $0.baseAddress! + publish.payload.startIndex }
        XCTAssertEqual(payloadAddress, bufferAddress)
        // Reading the next packet leaves it intact.
        XCTAssertEqual(try decoder.next()?.get(), second)
        XCTAssertNil(decoder.next())
        XCTAssertEqual(Array(publish.payload), Array(Fixtures.payload(1000)))
        XCTAssertEqual(.publish(publish), first)
    }

    func testAPacketNotYetWholeIsHeldAndCounted() {
        var decoder = MQTTDecoder(maximumPacketSize: 1 << 20)
        let connect = connectBytes(.v5)
        connect.dropLast().withUnsafeBytes { decoder.append($0) }
        XCTAssertNil(decoder.next())
        XCTAssertEqual(decoder.bufferedByteCount, connect.count - 1)
        XCTAssertGreaterThanOrEqual(decoder.bufferCapacity, decoder.bufferedByteCount)
        decoder.withWritableTail(minimumCapacity: 100) { space in
            space[0] = connect.last!
            return 1
        }
        XCTAssertEqual(try decoder.next()?.get(), connectPacket(.v5))
        XCTAssertEqual(decoder.bufferedByteCount, 0)
        XCTAssertNil(decoder.next())
    }

    func testAnIdleDecoderReleasesItsStorage() {
        var decoder = MQTTDecoder(maximumPacketSize: 1 << 20)
        let bytes = connectBytes(.v311) + [0xC0]
        bytes.withUnsafeBytes { decoder.append($0) }
        _ = decoder.next()
        XCTAssertNil(decoder.next())
        // A PINGREQ half here: the storage is kept.
        decoder.releaseStorageIfEmpty()
        XCTAssertGreaterThan(decoder.bufferCapacity, 0)
        ([0x00] as [UInt8]).withUnsafeBytes { decoder.append($0) }
        XCTAssertEqual(try decoder.next()?.get(), .pingreq)
        decoder.releaseStorageIfEmpty()
        XCTAssertEqual(decoder.bufferCapacity, 0)
        XCTAssertEqual(decoder.bufferedByteCount, 0)
        // And it goes on decoding.
        ([0xC0, 0x00] as [UInt8]).withUnsafeBytes { decoder.append($0) }
        XCTAssertEqual(try decoder.next()?.get(), .pingreq)
    }
}
