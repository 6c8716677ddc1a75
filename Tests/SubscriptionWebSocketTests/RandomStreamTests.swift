import TestSupport
import XCTest

@testable import SubscriptionWebSocket

/// Seeded random streams of frames, mostly well-formed with a bad one now and then: the same events however they
/// are fed, bounded memory, and the data a model of the stream expects.
final class RandomStreamTests: XCTestCase {
    /// A random stream and the events it must give (data coalesced), built frame by frame with a model of the rules.
    static func randomStream(using generator: inout SeededGenerator) -> (input: [UInt8], expected: [WebSocketEvent]) {
        var input: [UInt8] = []
        var expected: [WebSocketEvent] = []
        var openText: Bool?
        func add(_ event: WebSocketEvent) { expected = coalesced(expected + [event]) }
        for _ in 0..<Int.random(in: 1...12, using: &generator) {
            let mask = (0..<4).map { _ in UInt8.random(in: 0...255, using: &generator) }
            switch Int.random(in: 0..<10, using: &generator) {
            case 0...5:
                // A data frame: text (ASCII and a few characters, whole) or binary (any bytes).
                let isContinuation = openText != nil
                let isText = openText ?? Bool.random(using: &generator)
                let count = Int.random(
                    in: 0...(Int.random(in: 0..<6, using: &generator) == 0 ? 70_000 : 200), using: &generator)
                var payload: [UInt8]
                if isText {
                    let text = String((0..<count / 2).map { _ in "aZ \n€é𝄞".randomElement(using: &generator)! })
                    payload = bytes(text)
                } else {
                    payload = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
                }
                let fin = Bool.random(using: &generator)
                input += clientFrame(isContinuation ? 0 : (isText ? 1 : 2), payload, fin: fin, mask: mask)
                if !payload.isEmpty { add(.data(payload[...])) }
                openText = fin ? nil : isText
            case 6:
                let payload = (0..<Int.random(in: 0...125, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
                input += clientFrame(0x9, payload, mask: mask)
                add(.ping(payload[...]))
            case 7:
                let payload = (0..<Int.random(in: 0...125, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
                input += clientFrame(0xA, payload, mask: mask)
                add(.pong(payload[...]))
            case 8:
                // A bad frame ends the stream.
                let opcode = [3, 4, 5, 6, 7, 0xB, 0xF].randomElement(using: &generator)!
                input += clientFrame(UInt8(opcode), [1, 2, 3], mask: mask)
                add(.failure(.reservedOpcode(UInt8(opcode))))
                return (input, expected)
            default:
                input += clientFrame(0x8, [0x03, 0xE8] + bytes("bye"), mask: mask)
                add(.close(code: .normalClosure, reason: "bye"))
                return (input, expected)
            }
        }
        return (input, expected)
    }

    func testRandomStreamsMatchTheModelInEveryMode() {
        for seed in UInt64(0)..<300 {
            var generator = SeededGenerator(seed: seed)
            let (input, expected) = Self.randomStream(using: &generator)
            let events = decodeInAllModes(input, seeds: seed..<(seed + 3), byteByByte: input.count < 5000)
            XCTAssertEqual(events, expected, "seed \(seed)")
        }
    }

    func testRandomBytesGiveTheSameEventsHoweverFed() {
        for seed in UInt64(0)..<2000 {
            var generator = SeededGenerator(seed: 50_000 + seed)
            var input = (0..<Int.random(in: 0...300, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            // Mostly masked, small frames, so the stream gets past its first header now and then.
            if !input.isEmpty { input[0] = [0x81, 0x82, 0x01, 0x89, 0x0A][Int(input[0] % 5)] }
            if input.count > 1 { input[1] = 0x80 | (input[1] & 0x1F) }
            let reference = coalesced(decode(input, mode: .allAtOnce))
            XCTAssertEqual(coalesced(decode(input, mode: .randomChunks(seed: seed))), reference, "seed \(seed)")
            if seed % 8 == 0 { XCTAssertEqual(coalesced(decode(input, mode: .byteByByte)), reference, "seed \(seed)") }
        }
    }

    /// A long stream of large frames read in small pieces: the decoder never holds more than a header or a control
    /// frame, and its storage does not grow with the frames.
    func testLargeFramesNeverGrowTheBuffer() {
        var generator = SeededGenerator(seed: 3)
        var decoder = WebSocketFrameDecoder(limits: WebSocketLimits(maxFramePayload: 1 << 30))
        var received = 0
        var sent = 0
        for _ in 0..<20 {
            let payload = [UInt8](repeating: 0x41, count: Int.random(in: 100_000...300_000, using: &generator))
            let frame = clientFrame(0x2, payload) + clientFrame(0x9, Array(repeating: 1, count: 125))
            sent += payload.count
            var offset = 0
            while offset < frame.count {
                let end = min(frame.count, offset + Int.random(in: 1...4096, using: &generator))
                decoder.append(contentsOf: frame[offset..<end])
                offset = end
                while let event = decoder.next() {
                    if case .data(let bytes) = event { received += bytes.count }
                }
                XCTAssertLessThanOrEqual(decoder.bufferedByteCount, WebSocketFrameDecoder.maxBufferedBytes)
                XCTAssertLessThanOrEqual(decoder.bufferCapacity, 16 * 1024)
            }
        }
        XCTAssertEqual(received, sent)
    }
}
