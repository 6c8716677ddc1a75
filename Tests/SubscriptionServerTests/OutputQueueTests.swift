import Glibc
import SubscriptionProtocol
import TestSupport
import XCTest

@testable import SubscriptionServer

/// The session output queue: order of frames and replies across partial writes, and memory counted as held.
final class OutputQueueTests: XCTestCase {
    private var vectors = UnsafeMutablePointer<iovec>.allocate(capacity: 64)
    /// Where runs of small chunks are gathered for one write (the event loop's is 64 KiB).
    private var scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
    private var fds: [Int32] = [-1, -1]

    override func setUpWithError() throws {
        var pair: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &pair), 0)
        fds = pair
        var size: Int32 = 4096
        setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    override func tearDown() {
        close(fds[0])
        close(fds[1])
        vectors.deallocate()
        scratch.deallocate()
    }

    /// A publication whose payload is `text`; its frame is `MSG N <n>` LF text LF.
    private func publication(_ text: String) -> Publication {
        Publication.make(number: "N", payload: Array(text.utf8))
    }

    /// The loop's frame log, shared by every queue of a test.
    private var log = FrameLog()

    /// Queues `message` as a session would (``Session/receive(_:on:)``).
    private func append(_ message: Publication, to queue: inout OutputQueue) {
        queue.append(message, log: &log)
    }

    private func reply(_ text: String, to queue: inout OutputQueue) {
        Array(text.utf8).withUnsafeBytes { queue.append(replyBytes: $0) }
    }

    /// Reads everything available on the far end (of `pair`, by default the test's socket pair).
    private func drainPeer(_ pair: [Int32]? = nil) -> [UInt8] {
        let peer = (pair ?? fds)[1]
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = read(peer, &buffer, buffer.count)
            guard n > 0 else { return all }
            all += buffer[..<n]
        }
    }

    /// Writes and reads until the queue is empty; returns what arrived.
    private func writeAll(_ queue: inout OutputQueue, maxVectors: Int = 64, pair: [Int32]? = nil) throws -> [UInt8] {
        let pair = pair ?? fds
        var received: [UInt8] = []
        var rounds = 0
        while !queue.isEmpty {
            _ = try OutputWriter.write(&queue, to: pair[0], vectors: vectors, maxVectors: maxVectors, scratch: scratch)
            received += drainPeer(pair)
            rounds += 1
            XCTAssertLessThan(rounds, 100_000, "no progress")
        }
        return received + drainPeer(pair)
    }

    /// A second non-blocking socket pair with a 4 KiB send buffer, closed at the end of the test.
    private func makeSecondPair() throws -> [Int32] {
        var pair: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &pair), 0)
        var size: Int32 = 4096
        setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        addTeardownBlock {
            close(pair[0])
            close(pair[1])
        }
        return pair
    }

    /// With gathering into a scratch of 64 KiB, of 100 bytes (a run of small chunks cut short), and of 1 byte (never:
    /// every write from where the chunks lie); frames small (copied or shared) and large, among replies.
    func testFramesAndRepliesArriveInTheOrderQueuedAcrossPartialWrites() throws {
        for size in [65_536, 100, 1] {
            scratch.deallocate()
            scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
            try checkOrderAcrossPartialWrites(seed: UInt64(size))
        }
    }

    private func checkOrderAcrossPartialWrites(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        var queue = OutputQueue()
        var expected: [UInt8] = []
        var received: [UInt8] = []
        // A second queue, on a socket of its own, takes some of the same frames (sharing log blocks and
        // publications) and is written at other times: what the first writes meanwhile must not disturb it.
        let otherPair = try makeSecondPair()
        var other = OutputQueue()
        var otherExpected: [UInt8] = []
        var otherReceived: [UInt8] = []
        for index in 0..<3_000 {
            if Bool.random(using: &generator) {
                let large = Int.random(in: 0..<20, using: &generator) == 0
                let size =
                    large ? Int.random(in: 4000...9000, using: &generator) : Int.random(in: 1...300, using: &generator)
                let message = publication("\(index)" + String(repeating: "m", count: size))
                if Bool.random(using: &generator) {
                    append(message, to: &other)
                    otherExpected += message.frame
                }
                append(message, to: &queue)
                expected += message.frame
                if index % 7 == 0 { log.rewindIfUnheld() }  // an end of turn now and then
            } else {
                let text = "+OK \(index)\n"
                reply(text, to: &queue)
                expected += Array(text.utf8)
            }
            // Writes while queueing: one write fills the 4 KiB send buffer (the queue falls behind and copies its
            // ranges out), a later one finds it full; now and then the reader catches up and the queue with it,
            // and takes ranges of the log again.
            if index % 150 == 0 {
                _ = try OutputWriter.write(&queue, to: fds[0], vectors: vectors, maxVectors: 3, scratch: scratch)
            }
            if index % 450 == 0 { received += drainPeer() + (try writeAll(&queue, maxVectors: 3)) }
            if index % 330 == 0 {
                _ = try OutputWriter.write(&other, to: otherPair[0], vectors: vectors, maxVectors: 5, scratch: scratch)
            }
            if index % 1_000 == 999 { otherReceived += drainPeer(otherPair) + (try writeAll(&other, pair: otherPair)) }
        }
        received += drainPeer() + (try writeAll(&queue, maxVectors: 3))
        XCTAssertTrue(received == expected, "the first queue's bytes arrive as queued")
        XCTAssertEqual(queue.pendingBytes, 0)
        XCTAssertEqual(queue.heldBytes, 0)
        otherReceived += drainPeer(otherPair) + (try writeAll(&other, pair: otherPair))
        XCTAssertTrue(otherReceived == otherExpected, "the second queue's bytes arrive as queued")
        XCTAssertEqual(other.heldBytes, 0)
    }

    /// Regression: each 6-byte `+OK 1` after a pushed message started a 4 KiB reply block, so 100,000 pipelined
    /// self-delivered SENDs held hundreds of MB while the pause mark (counting bytes) saw a few MB. Replies now share
    /// one buffer, and what is counted is the memory held.
    func testSmallRepliesAfterFramesCostTheirBytesNotABlockEach() {
        var queue = OutputQueue()
        let message = publication("V1.0")
        XCTAssertEqual(message.frameCount, 13)
        for _ in 0..<10_000 {
            append(message, to: &queue)
            reply("+OK 1\n", to: &queue)
        }
        XCTAssertEqual(queue.pendingBytes, 10_000 * (13 + 6))
        XCTAssertGreaterThanOrEqual(queue.heldBytes, queue.pendingBytes, "every byte is held")
        XCTAssertLessThan(queue.heldBytes, 10_000 * 512, "hundreds of bytes per message at most, not a 4 KiB block")
    }

    /// A small frame to a session that keeps up is copied once into the loop's log, whatever the number of queues
    /// that take it, and consecutive frames make one chunk (one iovec); a reply between them starts a new one. A
    /// session whose last write was short shares the publication instead, until everything is out.
    func testSmallFramesGoThroughTheLogInOneRangeWhileTheSessionKeepsUpAndAreSharedWhenItIsBehind() throws {
        var first = OutputQueue()
        var second = OutputQueue()
        var expected: [UInt8] = []
        for index in 0..<100 {
            let message = publication("V\(index)")
            append(message, to: &first)
            append(message, to: &second)
            XCTAssertEqual(message.queueReferences, 0, "in the log: no queue refers to the publication")
            expected += message.frame
        }
        XCTAssertEqual(first.queuedChunks, 1, "100 consecutive frames: one range")
        XCTAssertEqual(second.queuedChunks, 1)
        XCTAssertGreaterThanOrEqual(first.heldBytes, first.pendingBytes, "every byte is held")
        XCTAssertLessThan(first.heldBytes, FrameLog.blockSize, "by its bytes, not by its block")
        reply("+OK 1\n", to: &first)
        append(publication("after"), to: &first)
        XCTAssertEqual(first.queuedChunks, 3, "a reply between frames: range, reply, range")
        expected += Array("+OK 1\n".utf8) + publication("after").frame
        XCTAssertEqual(try writeAll(&first), expected)
        XCTAssertEqual(first.heldBytes, 0)

        // Behind: shared, then in the log again once all is out.
        reply(String(repeating: "r", count: 64 << 10), to: &second)
        _ = try OutputWriter.write(&second, to: fds[0], vectors: vectors, maxVectors: 64, scratch: scratch)
        XCTAssertTrue(second.isBehind)
        let message = publication("behind")
        append(message, to: &second)
        XCTAssertEqual(message.queueReferences, 1, "behind: the publication is shared")
        _ = try writeAll(&second)
        XCTAssertFalse(second.isBehind, "all out: keeping up again")
        XCTAssertEqual(message.queueReferences, 0)
        append(message, to: &second)
        XCTAssertEqual(message.queueReferences, 0, "keeping up: through the log again")
        second.removeAll()
    }

    /// The log copies a publication once however many queues take it in turn, fills a block no queue holds again
    /// from its start (at the end of a turn, or when it is full), and starts a new block when a queue still holds
    /// the full one; bytes always arrive as queued.
    func testTheLogCopiesOnceAndReusesOnlyBlocksNoQueueHolds() throws {
        let message = publication(String(repeating: "m", count: 1000))
        let firstPlace = log.place(message)
        XCTAssertEqual(log.place(message).base, firstPlace.base, "the same publication again: not copied again")
        log.rewindIfUnheld()
        XCTAssertEqual(log.place(publication("x")).base, firstPlace.base, "no queue holds the block: from its start")

        var holder = OutputQueue()
        append(message, to: &holder)
        log.rewindIfUnheld()
        let next = publication("y")
        XCTAssertNotEqual(log.place(next).base, firstPlace.base, "a queue holds the block: not filled again")

        // More than a block's worth while the holder keeps its range: a second block, bytes intact.
        var expected = message.frame
        for index in 0..<200 {
            let frame = publication("\(index)" + String(repeating: "z", count: 900))
            append(frame, to: &holder)
            expected += frame.frame
        }
        XCTAssertGreaterThan(holder.queuedChunks, 1, "frames in two blocks are two ranges at least")
        XCTAssertGreaterThanOrEqual(holder.heldBytes, holder.pendingBytes, "every byte is held")
        XCTAssertEqual(try writeAll(&holder), expected)
        XCTAssertEqual(holder.heldBytes, 0)
    }

    /// A session that falls behind copies its ranges out of the log (in their order among its replies) and lets go
    /// of the blocks, so the log can fill them again; a range is counted by its bytes, not by its block; a session
    /// whose output is held shares frames instead of taking ranges.
    func testASessionThatFallsBehindCopiesItsRangesOutAndLetsGoOfTheBlocks() throws {
        var queue = OutputQueue()
        var expected: [UInt8] = []
        let first = publication("first")
        let firstBase = log.place(first).base
        log.rewindIfUnheld()
        for index in 0..<200 {
            let message = publication("\(index)" + String(repeating: "m", count: 100))
            append(message, to: &queue)
            expected += message.frame
            if index % 50 == 0 {
                reply("+OK \(index)\n", to: &queue)
                expected += Array("+OK \(index)\n".utf8)
            }
        }
        XCTAssertLessThan(queue.heldBytes, 2 * queue.pendingBytes, "ranges are counted by their bytes")
        log.rewindIfUnheld()
        XCTAssertNotEqual(log.place(publication("x")).base, firstBase, "the queue holds the block")
        var received = [UInt8]()
        _ = try OutputWriter.write(&queue, to: fds[0], vectors: vectors, maxVectors: 64, scratch: scratch)
        XCTAssertTrue(queue.isBehind, "the 4 KiB socket buffer took part of it")
        log.rewindIfUnheld()
        XCTAssertEqual(log.place(publication("y")).base, firstBase, "behind: the ranges were copied out")
        XCTAssertGreaterThanOrEqual(queue.heldBytes, queue.pendingBytes, "the copies are held in its own buffer")
        received += drainPeer()
        received += try writeAll(&queue)
        XCTAssertTrue(received == expected, "bytes in order across the copy")

        let shared = publication("held")
        queue.append(shared, log: &log, sharing: true)
        XCTAssertEqual(shared.queueReferences, 1, "output held: the frame is shared, not a range")
        queue.removeAll()
    }

    /// A full block that no queue holds is filled again from its start.
    func testAFullBlockNoQueueHoldsIsFilledAgain() {
        let frames = (0..<200).map { publication("\($0)" + String(repeating: "f", count: 1000)) }
        let start = log.place(frames[0]).base
        var bases = [start]
        for frame in frames.dropFirst() { bases.append(log.place(frame).base) }
        let perBlock = FrameLog.blockSize / frames[1].frameCount
        XCTAssertEqual(bases[perBlock], start, "the next frame after a full block starts the same block again")
        XCTAssertEqual(bases[2 * perBlock], start)
    }

    func testFramesOverTheCopyLimitAreSharedAndCountedInFull() throws {
        var queue = OutputQueue()
        let small = publication(String(repeating: "s", count: OutputQueue.copyLimit - 20))
        let large = publication(String(repeating: "l", count: OutputQueue.copyLimit + 1))
        XCTAssertLessThanOrEqual(small.frameCount, OutputQueue.copyLimit)
        append(small, to: &queue)
        let heldBeforeLarge = queue.heldBytes
        append(large, to: &queue)
        XCTAssertGreaterThanOrEqual(queue.heldBytes, heldBeforeLarge + large.heldBytes, "the large one is held whole")
        let received = try writeAll(&queue)
        XCTAssertEqual(received, small.frame + large.frame)
    }

    func testHeldMemoryCountsAFrameInFullHoweverFewOfItsBytesAreLeft() throws {
        var queue = OutputQueue()
        let big = publication(String(repeating: "b", count: 100_000))
        append(big, to: &queue)
        XCTAssertGreaterThanOrEqual(queue.heldBytes, 100_000 + Publication.overhead)
        _ = try OutputWriter.write(&queue, to: fds[0], vectors: vectors, maxVectors: 64, scratch: scratch)
        XCTAssertLessThan(queue.pendingBytes, 100_000, "partly written")
        XCTAssertGreaterThanOrEqual(
            queue.heldBytes, 100_000 + Publication.overhead, "the publication is held until all is out")
        _ = try writeAll(&queue)
        XCTAssertEqual(queue.heldBytes, 0)
    }

    /// The queues share one strong reference per publication and count their entries in it: the publication lives
    /// while any entry of any queue refers to it, whichever queue lets go last and however (written or dropped), and
    /// is freed after the last.
    func testAFrameInSeveralQueuesLivesUntilItsLastEntryIsWrittenOrDropped() throws {
        let large = String(repeating: "x", count: OutputQueue.copyLimit + 1)
        var first = OutputQueue()
        var second = OutputQueue()
        weak var gone: Publication?
        do {
            var message = publication(large)
            gone = message
            append(message, to: &first)
            append(message, to: &first)
            append(message, to: &second)
            XCTAssertEqual(message.queueReferences, 3)
            XCTAssertFalse(isKnownUniquelyReferenced(&message), "the queues hold it")
            let received = try writeAll(&first)
            XCTAssertEqual(received, message.frame + message.frame)
            XCTAssertEqual(message.queueReferences, 1, "the written entries counted off")
        }
        XCTAssertNotNil(gone, "the second queue's entry still holds it")
        second.removeAll()
        XCTAssertNil(gone, "the last entry dropped: freed")

        // Written last, after a partial write: the same.
        var third = OutputQueue()
        do {
            let message = publication(String(repeating: "y", count: 100_000))
            gone = message
            append(message, to: &third)
            append(message, to: &first)
            first.removeAll()
            XCTAssertEqual(message.queueReferences, 1)
        }
        _ = try OutputWriter.write(&third, to: fds[0], vectors: vectors, maxVectors: 64, scratch: scratch)
        XCTAssertNotNil(gone, "partly written: still held")
        _ = try writeAll(&third)
        XCTAssertNil(gone, "all written: freed")
    }

    func testRemoveAllDropsEverything() {
        var queue = OutputQueue()
        append(publication("a"), to: &queue)
        reply("+OK\n", to: &queue)
        queue.removeAll()
        XCTAssertTrue(queue.isEmpty)
        XCTAssertEqual(queue.heldBytes, 0)
    }

    func testOutputBufferGrowsCompactsKeepsOrderAndFreesOnlyWhenEmpty() {
        let buffer = OutputBuffer()
        XCTAssertEqual(buffer.capacity, 0, "nothing allocated before the first append")
        var generator = SeededGenerator(seed: 21)
        var expected: [UInt8] = []
        var next: UInt8 = 0
        for _ in 0..<2_000 {
            let count = Int.random(in: 1...300, using: &generator)
            let chunk = (0..<count).map { _ -> UInt8 in
                next &+= 1
                return next
            }
            chunk.withUnsafeBytes { buffer.append($0) }
            expected += chunk
            XCTAssertGreaterThanOrEqual(buffer.capacity, buffer.count)
            let taken = Int.random(in: 0...buffer.count, using: &generator)
            XCTAssertEqual(
                Array(UnsafeRawBufferPointer(start: buffer.readable(taken), count: taken)), Array(expected[..<taken]))
            buffer.consume(taken)
            expected.removeFirst(taken)
        }
        XCTAssertLessThanOrEqual(buffer.capacity, 4096, "compaction reuses space: the buffer does not grow without end")
        buffer.releaseStorage()
        XCTAssertEqual(buffer.capacity > 0, buffer.count > 0, "kept while bytes are queued")
        buffer.consume(buffer.count)
        buffer.releaseStorage()
        XCTAssertEqual(buffer.capacity, 0)
    }

    /// A buffer more than half full grows (twice), never reallocates at the same size; a large one that is mostly
    /// written out shrinks, so the capacity counted as held follows what is queued.
    func testOutputBufferGrowsWhenMoreThanHalfFullAndShrinksAfterABurst() {
        let buffer = OutputBuffer()
        let kilobyte = [UInt8](repeating: 0x42, count: 1024)
        for _ in 0..<3 { kilobyte.withUnsafeBytes { buffer.append($0) } }
        XCTAssertEqual(buffer.capacity, 4096)
        buffer.consume(100)
        // 2,972 live + 1,100 new bytes would fit after a move, but the live ones fill more than half the buffer.
        [UInt8](repeating: 0x43, count: 1100).withUnsafeBytes { buffer.append($0) }
        XCTAssertEqual(buffer.capacity, 8192, "twice the size, not a new buffer of the same size")
        for _ in 0..<300 { kilobyte.withUnsafeBytes { buffer.append($0) } }
        XCTAssertGreaterThanOrEqual(buffer.capacity, 300 * 1024)
        buffer.consume(buffer.count - 1000)
        XCTAssertLessThanOrEqual(buffer.capacity, OutputBuffer.shrinkAbove, "mostly written out: made small again")
        XCTAssertEqual(buffer.count, 1000)
        XCTAssertEqual(
            Array(UnsafeRawBufferPointer(start: buffer.readable(1000), count: 1000)), Array(kilobyte[..<1000]))
    }

    /// The write state alone, with no socket (the writes are ``OutputWriter``'s): a writer that takes a random part of
    /// each offer, or nothing, gets exactly the queued bytes in order, and the queue ends empty and not behind.
    func testTheWriteStateGivesTheQueuedBytesInOrderWhateverEachWriteTakes() {
        var random = SeededGenerator(seed: 21)
        for round in 0..<40 {
            var queue = OutputQueue()
            var expected: [UInt8] = []
            for index in 0..<Int.random(in: 1...60, using: &random) {
                if Bool.random(using: &random) {
                    let text = String(repeating: "m", count: Int.random(in: 0...3000, using: &random)) + "\(index)"
                    let message = publication(text)
                    expected += Array("MSG N \(text.utf8.count)\n\(text)\n".utf8)
                    append(message, to: &queue)
                } else {
                    let text = "+OK \(index)\r\n"
                    expected += Array(text.utf8)
                    reply(text, to: &queue)
                }
            }
            var written: [UInt8] = []
            var steps = 0
            while !queue.isEmpty {
                let (count, offered) = queue.nextVectors(vectors, maxVectors: 1 + round % 8, scratch: scratch)
                XCTAssertGreaterThan(offered, 0)
                var bytes: [UInt8] = []
                for index in 0..<count {
                    let vector = vectors[index]
                    bytes += UnsafeRawBufferPointer(start: vector.iov_base, count: vector.iov_len)
                }
                XCTAssertEqual(bytes.count, offered, "the iovecs hold what is offered")
                let taken = Int.random(in: 0...offered, using: &random)
                if taken == 0 {
                    queue.socketFull()
                } else {
                    written += bytes[..<taken]
                    queue.wrote(taken, of: offered)
                }
                if taken < offered { XCTAssertTrue(queue.isBehind, "behind after a short write, until all is out") }
                steps += 1
                XCTAssertLessThan(steps, 100_000)
            }
            XCTAssertEqual(written, expected, "round \(round)")
            XCTAssertFalse(queue.isBehind)
            XCTAssertEqual(queue.heldBytes, 0)
        }
    }
}
