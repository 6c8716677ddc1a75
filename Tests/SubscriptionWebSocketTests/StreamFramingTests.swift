import SubscriptionWebSocket
import TestSupport
import XCTest

/// ``WebSocketStreamFraming`` driven as a writer drives it, against a socket that takes a random number of bytes per
/// write, with bytes queued between writes: what went out must parse as frames (RFC 6455 section 5.2) whose data
/// payloads, joined, are the stream's data bytes, with every raw segment (here: ready-made control frames) whole,
/// in its place, and never inside a data frame.
final class StreamFramingTests: XCTestCase {
    /// The queue a session keeps: its unwritten bytes, data and raw segments in order.
    private struct Queue {
        var bytes: [UInt8] = []
        /// The first unwritten byte of ``bytes``.
        var start = 0
        var framing = WebSocketStreamFraming()

        var unwritten: Int { bytes.count - start }

        mutating func queueData(_ data: [UInt8]) { bytes += data }

        mutating func queueRaw(_ frame: [UInt8]) {
            framing.queuedRaw(count: frame.count, behind: unwritten)
            bytes += frame
        }

        /// One write of at most `room` bytes (the socket's room): returns what went out on the wire.
        mutating func write(room: Int) -> [UInt8] {
            let next = framing.nextWrite(queued: unwritten)
            var offered = framing.withHeader { Array($0) }
            XCTAssertEqual(offered.count, next.headerCount)
            offered += bytes[start..<min(bytes.count, start + next.streamLimit, start + room)]
            let written = min(room, offered.count)
            let streamBytes = framing.wrote(written, of: next)
            XCTAssertEqual(streamBytes, max(0, written - next.headerCount))
            start += streamBytes
            return Array(offered.prefix(written))
        }
    }

    /// A parsed server frame.
    private struct Frame: Equatable {
        var opcode: UInt8
        var payload: [UInt8]
    }

    /// Splits `wire` into unmasked frames; fails the test on a truncated or masked one.
    private func parse(_ wire: [UInt8]) -> [Frame] {
        var frames: [Frame] = []
        var index = 0
        while index < wire.count {
            guard wire.count - index >= 2 else {
                XCTFail("a truncated header at \(index)")
                return frames
            }
            XCTAssertEqual(wire[index] & 0xF0, 0x80, "FIN set, no RSV bit")
            XCTAssertEqual(wire[index + 1] & 0x80, 0, "server frames are not masked")
            var length = Int(wire[index + 1] & 0x7F)
            var start = index + 2
            if length == 126 {
                length = Int(wire[start]) << 8 | Int(wire[start + 1])
                start += 2
            } else if length == 127 {
                length = wire[start..<(start + 8)].reduce(0) { $0 << 8 | Int($1) }
                start += 8
            }
            guard start + length <= wire.count else {
                XCTFail("a truncated payload at \(index)")
                return frames
            }
            frames.append(Frame(opcode: wire[index] & 0x0F, payload: Array(wire[start..<(start + length)])))
            index = start + length
        }
        return frames
    }

    func testFramesCarryTheStreamAndRawSegmentsStayWholeBetweenThem() {
        for seed in 1...40 {
            var random = SeededGenerator(seed: UInt64(seed))
            var queue = Queue()
            var data: [UInt8] = []
            var pongs: [[UInt8]] = []
            var wire: [UInt8] = []
            for step in 0..<60 {
                switch Int.random(in: 0..<10, using: &random) {
                case 0:
                    let payload = (0..<Int.random(in: 0...125, using: &random)).map { UInt8(truncatingIfNeeded: $0) }
                    pongs.append(payload)
                    queue.queueRaw(WebSocketFrameEncoder.pongFrame(payload: payload))
                case 1...5:
                    // Sizes around the 2-, 4- and 10-byte header bounds.
                    let size = [1, 125, 126, 65_535, 65_536, Int.random(in: 1...3000, using: &random)].randomElement(
                        using: &random)!
                    var chunk = [UInt8](repeating: UInt8(truncatingIfNeeded: step), count: size)
                    chunk[0] = UInt8(truncatingIfNeeded: seed)
                    data += chunk
                    queue.queueData(chunk)
                default:
                    wire += queue.write(room: Int.random(in: 0...70_000, using: &random))
                }
            }
            // Drain, a few bytes at a time at first, so headers are cut too.
            var rounds = 0
            while queue.unwritten > 0 || queue.framing.isInsideFrame {
                wire += queue.write(room: rounds < 20 ? Int.random(in: 1...3, using: &random) : 100_000)
                rounds += 1
                XCTAssertLessThan(rounds, 10_000, "seed \(seed): the queue does not drain")
                if rounds >= 10_000 { return }
            }
            let frames = parse(wire)
            XCTAssertEqual(frames.filter { $0.opcode == 0x2 }.flatMap(\.payload), data, "seed \(seed): the data")
            XCTAssertEqual(frames.filter { $0.opcode == 0xA }.map(\.payload), pongs, "seed \(seed): the pongs")
            XCTAssertEqual(frames.filter { $0.opcode != 0x2 && $0.opcode != 0xA }, [], "seed \(seed)")
            XCTAssertFalse(frames.contains { $0.opcode == 0x2 && $0.payload.isEmpty }, "seed \(seed): empty frame")
        }
    }

    func testNothingQueuedIsNothingToWrite() {
        var framing = WebSocketStreamFraming()
        XCTAssertEqual(framing.nextWrite(queued: 0), .init(headerCount: 0, streamLimit: 0))
        XCTAssertFalse(framing.isInsideFrame)
    }

    func testAFrameStartedIsFinishedBeforeARawSegmentQueuedAfterIt() {
        var queue = Queue()
        queue.queueData(Array(repeating: 7, count: 300))
        // 4 header bytes and 10 payload bytes go out; then a pong is queued.
        let first = queue.write(room: 14)
        XCTAssertEqual(first.prefix(4), [0x82, 126, 0x01, 0x2C])
        queue.queueRaw(WebSocketFrameEncoder.pongFrame(payload: [1, 2]))
        XCTAssertEqual(queue.framing.nextWrite(queued: queue.unwritten), .init(headerCount: 0, streamLimit: 290))
        let rest = queue.write(room: 1000)
        XCTAssertEqual(rest.count, 290)
        XCTAssertEqual(queue.write(room: 1000), [0x8A, 2, 1, 2])
    }
}
