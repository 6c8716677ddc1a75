import TestSupport
import XCTest

@testable import SubscriptionNATS

/// Frames that break the protocol: each ends the parse with its error, in every feed mode, and the frames before
/// it are still returned.
final class NATSParserMalformedTests: XCTestCase {
    /// Input (after a valid PING) and the error it must give.
    private let table: [(String, NATSProtocolError)] = [
        ("HELLO\r\n", .unknownOperation("HELLO")),
        ("PINGX\r\n", .unknownOperation("PINGX")),
        ("\u{01}\u{02}\r\n", .unknownOperation("??")),
        ("PING now\r\n", .malformedArguments(operation: "PING", reason: "unexpected argument")),
        ("+OK x\r\n", .malformedArguments(operation: "+OK", reason: "unexpected argument")),
        ("MSG a 1\r\n", .malformedArguments(operation: "MSG", reason: "2 arguments, expected 3 or 4")),
        ("MSG a 1 r 2 3\r\n", .malformedArguments(operation: "MSG", reason: "5 arguments, expected 3 or 4")),
        ("MSG a x 2\r\nhi\r\n", .malformedArguments(operation: "MSG", reason: "the sid is not a number")),
        ("MSG a 1 -2\r\n", .malformedArguments(operation: "MSG", reason: "a size is not a number")),
        ("MSG a 1 99999999999999999999\r\n", .malformedArguments(operation: "MSG", reason: "a size is not a number")),
        ("HMSG a 1 5\r\n", .malformedArguments(operation: "HMSG", reason: "3 arguments, expected 4 or 5")),
        (
            "HMSG a 1 20 10\r\n",
            .malformedArguments(operation: "HMSG", reason: "header size 20 is larger than total size 10")
        ),
        ("HMSG a 1 3 10\r\n", .malformedArguments(operation: "HMSG", reason: "header size 3 is too small")),
        ("MSG a 1 2\r\nhiX\r\n", .missingCRLFAfterPayload(subject: "a")),
        ("MSG a 1 2\r\nhi\rX\n", .missingCRLFAfterPayload(subject: "a")),
        ("HMSG a 1 12 12\r\nHTTP/1.0\r\n\r\n\r\n", .badHeaderBlock("does not start with NATS/1.0")),
        ("HMSG a 1 15 15\r\nNATS/1.0 5x\r\n\r\n\r\n", .badHeaderBlock("a status that is not 3 digits")),
        ("HMSG a 1 21 21\r\nNATS/1.0\r\nNoColon\r\n\r\n\r\n", .badHeaderBlock("a line without 'Name:'")),
        ("HMSG a 1 12 12\r\nNATS/1.0\r\nK:\r\n\r\n", .badHeaderBlock("no empty line at the end")),
        ("HMSG a 1 18 18\r\nNATS/1.0\r\n\r\nabcd\r\n\r\n", .badHeaderBlock("bytes after the empty line")),
        ("INFO {\"max_payload\":0}\r\n", .badInfo("max_payload 0 is not positive")),
    ]

    /// JSON that is not an `INFO` object ends the parse with `badInfo` and the decoder's reason (its words are
    /// Foundation's), in every feed mode.
    func testAnInfoThatIsNotAJSONObjectIsBadInfo() {
        for json in ["[1]", "{\"a\":}", "{\"max_payload\":\"big\"}", "{\"connect_urls\":[1]}"] {
            var parser = NATSParser()
            parser.append(contentsOf: bytes("INFO \(json)\r\n"))
            guard case .failure(.badInfo(let reason))? = parser.next() else { return XCTFail("\(json) is not badInfo") }
            XCTAssertFalse(reason.isEmpty, json)
            assertParses(bytes("PING\r\nINFO \(json)\r\nPING\r\n"), [.success(.ping), .failure(.badInfo(reason))])
        }
    }

    func testEachMalformedFrameEndsTheParseWithItsError() {
        for (input, error) in table {
            assertParses(bytes("PING\r\n" + input + "PING\r\n"), [.success(.ping), .failure(error)])
        }
    }

    func testAControlLineOverTheLimitIsRefusedBeforeItsEnd() {
        let limits = NATSParser.Limits(maxControlLine: 64)
        // 64 bytes and CRLF are fine; 65 are not, and the error comes without waiting for a LF.
        let fits = "-ERR '" + String(repeating: "e", count: 57) + "'"
        XCTAssertEqual(fits.utf8.count, 64)
        assertParses(bytes(fits + "\r\n"), [.success(.error(String(repeating: "e", count: 57)))], limits: limits)
        assertParses(bytes(String(repeating: "P", count: 200)), [.failure(.lineTooLong(limit: 64))], limits: limits)
        assertParses(bytes(fits + "e\r\n"), [.failure(.lineTooLong(limit: 64))], limits: limits)
    }

    func testAMessageOverMaxPayloadIsRefusedAtItsLine() {
        let limits = NATSParser.Limits(maxPayload: 10)
        assertParses(bytes("MSG a 1 10\r\n0123456789\r\n"), [message("a", 1, "0123456789")], limits: limits)
        assertParses(bytes("MSG a 1 11\r\n"), [.failure(.payloadTooBig(size: 11, limit: 10))], limits: limits)
        // Headers count: an HMSG's total size is what max_payload limits.
        assertParses(bytes("HMSG a 1 12 13\r\n"), [.failure(.payloadTooBig(size: 13, limit: 10))], limits: limits)
    }

    func testBytesAfterAnErrorAreDropped() {
        var parser = NATSParser()
        parser.append(contentsOf: bytes("BOGUS\r\n"))
        XCTAssertEqual(parser.next(), .failure(.unknownOperation("BOGUS")))
        parser.append(contentsOf: bytes("PING\r\n"))
        XCTAssertNil(parser.next())
        XCTAssertEqual(parser.bufferedByteCount, 0)
        parser.reset()
        parser.append(contentsOf: bytes("PING\r\n"))
        XCTAssertEqual(parser.next(), .success(.ping))
    }

    /// Random bytes, and valid frames with random bytes flipped: the parser never traps, stays bounded, and says
    /// nothing after its first error.
    func testRandomInputNeverTraps() {
        var generator = SeededGenerator(seed: 42)
        let valid = bytes(
            "MSG a.b 1 r 3\r\nabc\r\nHMSG x 2 16 18\r\nNATS/1.0 503\r\n\r\nhi\r\nPING\r\nINFO {\"max_payload\":64}\r\n")
        for round in 0..<400 {
            var input = valid
            for _ in 0..<(1 + round % 5) {
                input[Int.random(in: 0..<input.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            if round % 4 == 0 { input = (0..<200).map { _ in UInt8.random(in: 0...255, using: &generator) } }
            _ = parse(
                input, limits: NATSParser.Limits(maxControlLine: 128, maxPayload: 64),
                mode: .randomChunks(seed: UInt64(round)))
        }
    }
}
