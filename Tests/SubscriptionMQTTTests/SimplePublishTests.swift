import TestSupport
import XCTest

@testable import SubscriptionMQTT

/// The one-pass path of a repeated QoS 0 PUBLISH (``MQTTDecoder/peekSimplePublish()``): a reader that takes the
/// simple ones by peeking (for the topics it knows) and the rest with `next()` reads exactly what `next()` alone
/// reads, packet for packet and failure for failure, however the bytes are cut; and it never takes a packet `next()`
/// would refuse or read differently.
final class SimplePublishTests: XCTestCase {
    /// A reader that peeks first, as the server does for its known topics.
    private func decodePeeking(
        _ input: [UInt8], known: Set<[UInt8]>, mode: FeedMode, maximumPacketSize: Int = 1 << 22
    ) -> (packets: [MQTTPacket], failure: MQTTDecodeError?, peeked: Int) {
        var decoder = MQTTDecoder(maximumPacketSize: maximumPacketSize)
        var packets: [MQTTPacket] = []
        var failure: MQTTDecodeError?
        var peeked = 0
        func drain(_ decoder: inout MQTTDecoder) {
            while true {
                if let simple = decoder.peekSimplePublish(), known.contains(Array(simple.topic)) {
                    let topic = String(decoding: simple.topic, as: UTF8.self)
                    packets.append(.publish(MQTTPublish(topic: topic, payload: ArraySlice(Array(simple.payload)))))
                    decoder.consume(simple)
                    peeked += 1
                    continue
                }
                guard let next = decoder.next() else { return }
                switch next {
                case .success(let packet): packets.append(detached(packet))
                case .failure(let error): failure = error
                }
            }
        }
        mode.feed(input, to: &decoder, drain: drain)
        return (packets, failure, peeked)
    }

    private func stream(_ version: MQTTVersion, _ packets: [MQTTPacket]) -> [UInt8] {
        var bytes: [UInt8] = []
        MQTTEncoder.encode(.connect(MQTTConnect(version: version, clientID: "c")), version: version, into: &bytes)
        for packet in packets { MQTTEncoder.encode(packet, version: version, into: &bytes) }
        return bytes
    }

    func testPeekingReadsWhatNextReadsInEveryFeedMode() {
        var generator = SeededGenerator(seed: 25)
        for version in [MQTTVersion.v311, .v5] {
            var packets: [MQTTPacket] = []
            for index in 0..<300 {
                let topic = ["a/b", "sensors/room 1/t", "x", "a/b/c"][index % 4]
                let payload = ArraySlice(
                    (0..<Int.random(in: 0...300, using: &generator)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) }
                )
                switch index % 7 {
                case 0:
                    packets.append(
                        .publish(
                            MQTTPublish(topic: topic, qos: .atLeastOnce, packetID: UInt16(index + 1), payload: payload))
                    )
                case 1: packets.append(.publish(MQTTPublish(topic: topic, retain: true, payload: payload)))
                case 2:
                    var properties = MQTTProperties()
                    if version == .v5 { properties.userProperties = [MQTTUserProperty("k", "v")] }
                    packets.append(.publish(MQTTPublish(topic: topic, properties: properties, payload: payload)))
                case 3: packets.append(.pingreq)
                default: packets.append(.publish(MQTTPublish(topic: topic, payload: payload)))
                }
            }
            let input = stream(version, packets)
            let known: Set<[UInt8]> = [Array("a/b".utf8), Array("x".utf8)]
            let reference = decode(input, mode: .allAtOnce)
            XCTAssertNil(reference.failure)
            for mode in FeedMode.all {
                let peeking = decodePeeking(input, known: known, mode: mode)
                XCTAssertNil(peeking.failure, "\(version) \(mode)")
                XCTAssertEqual(peeking.packets, reference.packets, "\(version) \(mode)")
                XCTAssertGreaterThan(peeking.peeked, 50, "the one-pass path was taken (\(version) \(mode))")
            }
        }
    }

    /// A packet `next()` refuses is never taken by peeking: a wrong first byte (flags, QoS 3), a second CONNECT, a
    /// packet over the maximum size, a 5-byte remaining length, a topic length past the packet, a 5.0 PUBLISH with
    /// properties; and nothing is peeked before CONNECT.
    func testPeekingTakesNothingNextWouldRefuseOrReadOtherwise() {
        let topic = Array("a/b".utf8)
        var decoder = MQTTDecoder(maximumPacketSize: 64)
        var publish: [UInt8] = []
        MQTTEncoder.encode(.publish(MQTTPublish(topic: "a/b", payload: [1, 2])), version: .v311, into: &publish)
        publish.withUnsafeBytes { decoder.append($0) }
        XCTAssertNil(decoder.peekSimplePublish(), "before CONNECT")
        var connected = MQTTDecoder(maximumPacketSize: 64)
        var connect: [UInt8] = []
        MQTTEncoder.encode(.connect(MQTTConnect(version: .v5, clientID: "c")), version: .v5, into: &connect)
        connect.withUnsafeBytes { connected.append($0) }
        guard case .success(.connect)? = connected.next() else { return XCTFail("CONNECT") }
        let refused: [[UInt8]] = [
            [0x31, 0x06, 0x00, 0x03] + topic + [0x00],  // RETAIN
            [0x38, 0x06, 0x00, 0x03] + topic + [0x00],  // DUP at QoS 0
            [0x36, 0x06, 0x00, 0x03] + topic + [0x00],  // QoS 3
            [0x30, 0x80, 0x80, 0x80, 0x80, 0x01],  // remaining length in 5 bytes
            [0x30, 0x7F] + [UInt8](repeating: 0, count: 127),  // over the maximum size
            [0x30, 0x05, 0x00, 0x09] + topic,  // topic past the packet
            [0x30, 0x08, 0x00, 0x03] + topic + [0x02, 0x23, 0x00],  // 5.0 with properties
            connect,  // a second CONNECT
        ]
        for bytes in refused {
            var copy = connected
            bytes.withUnsafeBytes { copy.append($0) }
            XCTAssertNil(copy.peekSimplePublish(), "\(bytes.prefix(6))")
        }
        var good = connected
        ([0x30, 0x08, 0x00, 0x03] + topic + [0x00, 0x41, 0x42]).withUnsafeBytes { good.append($0) }
        let simple = good.peekSimplePublish()
        XCTAssertEqual(simple.map { Array($0.topic) }, topic)
        XCTAssertEqual(simple.map { Array($0.payload) }, [0x41, 0x42])
        XCTAssertEqual(good.bufferedByteCount, 10, "peeking consumes nothing")
        if let simple { good.consume(simple) }
        XCTAssertEqual(good.bufferedByteCount, 0)
        XCTAssertNil(good.next())
    }
}
