import XCTest

@testable import SubscriptionProtocol

/// The buffer: reading straight into its tail, compaction, capacity reuse, accounting.
final class ParserBufferTests: XCTestCase {
    func testWithWritableTailCommitsWhatBodyReturns() {
        var parser = CommandParser()
        let returned = parser.withWritableTail(minimumCapacity: 100) { space in
            XCTAssertGreaterThanOrEqual(space.count, 100)
            space.copyBytes(from: bytes("PING\nQUIT\ngarbage"))
            return 10  // only "PING\nQUIT\n" is committed
        }
        XCTAssertEqual(returned, 10)
        XCTAssertEqual(parser.bufferedByteCount, 10)
        XCTAssertEqual(parser.next(), .success(.ping(text: nil)))
        XCTAssertEqual(parser.next(), .success(.quit))
        XCTAssertNil(parser.next())
    }

    func testCommittingZeroBytesChangesNothing() {
        var parser = CommandParser()
        parser.append(contentsOf: bytes("PI"))
        XCTAssertEqual(parser.withWritableTail(minimumCapacity: 8) { _ in 0 }, 0)
        XCTAssertEqual(parser.bufferedByteCount, 2)
        XCTAssertNil(parser.next())
        parser.append(contentsOf: bytes("NG\n"))
        XCTAssertEqual(parser.next(), .success(.ping(text: nil)))
    }

    struct ReadFailed: Error {}

    func testAThrowingBodyCommitsNothing() {
        var parser = CommandParser()
        parser.append(contentsOf: bytes("PING"))
        XCTAssertThrowsError(
            try parser.withWritableTail(minimumCapacity: 4) { space in
                space.copyBytes(from: bytes("\n\n\n\n"))
                throw ReadFailed()
            })
        XCTAssertEqual(parser.bufferedByteCount, 4)
        XCTAssertNil(parser.next())
    }

    func testConsumedBytesAreDroppedAndCapacityReused() {
        var parser = CommandParser()
        parser.append(contentsOf: Array(repeating: UInt8(ascii: "\n"), count: 1000))
        XCTAssertNil(parser.next())
        XCTAssertEqual(parser.bufferedByteCount, 0)
        let capacity = parser.bufferCapacity
        XCTAssertGreaterThanOrEqual(capacity, 1000)
        for _ in 0..<100 {
            parser.append(contentsOf: bytes("PUB N 3\nab"))
            XCTAssertNil(parser.next())
            parser.append(contentsOf: bytes("c\nSEND N partial"))
            XCTAssertEqual(parser.next(), publish("N", bytes("abc")))
            XCTAssertNil(parser.next())
            parser.append(contentsOf: bytes(" text\n"))
            XCTAssertEqual(parser.next(), send("N", "partial text"))
            XCTAssertEqual(parser.bufferedByteCount, 0)
        }
        XCTAssertEqual(parser.bufferCapacity, capacity, "the same storage is reused")
    }

    func testUnreadBytesMoveToTheFront() {
        var parser = CommandParser()
        parser.append(contentsOf: bytes("PING one\nPING tw"))
        XCTAssertEqual(parser.next(), .success(.ping(text: "one")))
        XCTAssertNil(parser.next())
        XCTAssertEqual(parser.bufferedByteCount, 7)
        parser.append(contentsOf: bytes("o\n"))
        XCTAssertEqual(parser.input.readIndex, 0, "compacted by the append")
        XCTAssertEqual(parser.bufferedByteCount, 9)
        XCTAssertEqual(parser.next(), .success(.ping(text: "two")))
    }

    func testAPartialLineIsNotScannedTwice() {
        var parser = CommandParser()
        parser.append(contentsOf: bytes("PING 12345"))
        XCTAssertNil(parser.next())
        XCTAssertEqual(parser.scanned, 10)
        parser.append(contentsOf: bytes("678"))
        XCTAssertNil(parser.next())
        XCTAssertEqual(parser.scanned, 13)
        parser.append(contentsOf: bytes("\n"))
        XCTAssertEqual(parser.next(), .success(.ping(text: "12345678")))
        XCTAssertEqual(parser.scanned, 0)
    }

    func testBufferedByteCountIncludesAPendingPublishLine() {
        var parser = CommandParser()
        parser.append(contentsOf: bytes("PUB N 10\r\n12345"))
        XCTAssertNil(parser.next())
        XCTAssertEqual(parser.bufferedByteCount, 15)
        parser.append(contentsOf: bytes("67890\n"))
        XCTAssertEqual(parser.next(), publish("N", bytes("1234567890")))
        XCTAssertEqual(parser.bufferedByteCount, 0)
    }

    func testAppendFromANonContiguousSequence() {
        var parser = CommandParser()
        parser.append(contentsOf: "PING lazy\n".utf8.lazy.map { $0 })
        XCTAssertEqual(parser.next(), .success(.ping(text: "lazy")))
    }
}

/// Regression: after one 1 MiB payload the parser kept a 1 MiB buffer for the rest of the connection.
final class ParserBufferShrinkTests: XCTestCase {
    func testBufferIsGivenBackAfterALargePayload() {
        var parser = CommandParser()
        let payload = [UInt8](repeating: 0x41, count: 1_000_000)
        parser.append(contentsOf: Array("PUB N \(payload.count)\n".utf8) + payload + [0x0A])
        guard case .success(.publish(_, let received, _))? = parser.next() else { return XCTFail("no PUB parsed") }
        XCTAssertEqual(received.count, payload.count)
        XCTAssertGreaterThan(parser.bufferCapacity, 1_000_000)
        parser.append(contentsOf: Array("PING\n".utf8))
        XCTAssertEqual(parser.next(), .success(.ping(text: nil)))
        XCTAssertLessThanOrEqual(parser.bufferCapacity, 256 * 1024, "storage of the big payload was kept")
    }
}
