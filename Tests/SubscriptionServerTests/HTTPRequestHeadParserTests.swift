import TestSupport
import XCTest

@testable import SubscriptionServer

/// The metrics endpoint's request-head parser, fed whole, one byte at a time and in random chunks (the same outcome
/// each way), plus a table of malformed heads.
final class HTTPRequestHeadParserTests: XCTestCase {
    /// How the bytes reach the parser.
    private enum Feed: CustomStringConvertible {
        case whole
        case byteByByte
        case randomChunks(seed: UInt64)

        var description: String {
            switch self {
            case .whole: "whole"
            case .byteByByte: "one byte at a time"
            case .randomChunks(let seed): "random chunks, seed \(seed)"
            }
        }
    }

    private static let feeds: [Feed] = [.whole, .byteByByte] + (1...20).map { .randomChunks(seed: $0) }

    /// The outcome after feeding `text`, checked to be the same for every way of feeding it.
    private func parse(
        _ text: String, maxHeadBytes: Int = 8192, file: StaticString = #filePath, line: UInt = #line
    ) -> HTTPRequestHeadParser.Outcome {
        let bytes = Array(text.utf8)
        var outcomes: [(Feed, HTTPRequestHeadParser.Outcome)] = []
        for feed in Self.feeds {
            var parser = HTTPRequestHeadParser(maxHeadBytes: maxHeadBytes)
            switch feed {
            case .whole:
                parser.consume(bytes)
            case .byteByByte:
                for byte in bytes { parser.consume(CollectionOfOne(byte)) }
            case .randomChunks(let seed):
                var random = SeededGenerator(seed: seed)
                var start = 0
                while start < bytes.count {
                    let end = min(bytes.count, start + Int.random(in: 0...13, using: &random))
                    parser.consume(bytes[start..<end])
                    start = end
                }
            }
            outcomes.append((feed, parser.outcome))
        }
        for (feed, outcome) in outcomes.dropFirst() {
            XCTAssertEqual(
                outcome, outcomes[0].1, "fed \(feed) vs whole: \(text.debugDescription)", file: file, line: line)
        }
        return outcomes[0].1
    }

    private func head(_ outcome: HTTPRequestHeadParser.Outcome, file: StaticString = #filePath, line: UInt = #line)
        -> HTTPRequestHead?
    {
        guard case .complete(let head) = outcome else {
            XCTFail("expected a complete head, got \(outcome)", file: file, line: line)
            return nil
        }
        return head
    }

    func testCurlsRequest() throws {
        let text = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9827\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n"
        let head = try XCTUnwrap(head(parse(text)))
        XCTAssertEqual(head.method, "GET")
        XCTAssertEqual(head.target, "/metrics")
        XCTAssertEqual(head.path, "/metrics")
        XCTAssertEqual(head.minorVersion, 1)
        XCTAssertEqual(head.fields.map(\.name), ["Host", "User-Agent", "Accept"])
        XCTAssertEqual(head.fields[0].value, "127.0.0.1:9827")
    }

    func testQueryIsNotPartOfThePath() throws {
        let head = try XCTUnwrap(head(parse("GET /metrics?name[]=x HTTP/1.0\r\n\r\n")))
        XCTAssertEqual(head.path, "/metrics")
        XCTAssertEqual(head.minorVersion, 0)
    }

    /// RFC 9112: a recipient may take a bare LF as a line end, and should skip empty lines before the request line.
    func testBareLinefeedsAndLeadingEmptyLines() throws {
        let head = try XCTUnwrap(head(parse("\r\n\nGET /x HTTP/1.1\nHost: a\n\n")))
        XCTAssertEqual(head.target, "/x")
    }

    func testFieldValueBlanksAreTrimmedAndNamesKeptAsSent() throws {
        let head = try XCTUnwrap(head(parse("HEAD /metrics HTTP/1.1\r\nhOsT: \t a b \t\r\nX-Empty:\r\n\r\n")))
        XCTAssertEqual(head.fields, [.init(name: "hOsT", value: "a b"), .init(name: "X-Empty", value: "")])
    }

    func testIncompleteHeadNeedsMore() {
        XCTAssertEqual(parse("GET /metrics HTTP/1.1\r\nHost: a\r\n"), .needMore)
        XCTAssertEqual(parse("GET /met"), .needMore)
        XCTAssertEqual(parse(""), .needMore)
    }

    func testBytesAfterTheHeadAreNotTaken() throws {
        var parser = HTTPRequestHeadParser(maxHeadBytes: 64)
        let outcome = parser.consume(Array("GET / HTTP/1.0\r\n\r\nGARBAGE \u{1} that would fail".utf8))
        XCTAssertEqual(try XCTUnwrap(head(outcome)).target, "/")
        XCTAssertEqual(parser.consume(Array("more\r\n".utf8)), outcome)
    }

    func testMalformedHeads() {
        let table: [(String, String)] = [
            ("garbage\r\n\r\n", "one word"),
            ("GET /metrics\r\n\r\n", "no version"),
            ("GET  /metrics HTTP/1.1\r\nHost: a\r\n\r\n", "two spaces"),
            ("GET /metrics HTTP/1.1 \r\nHost: a\r\n\r\n", "a trailing space"),
            ("G(T /metrics HTTP/1.1\r\nHost: a\r\n\r\n", "a method that is not a token"),
            ("GET /me\u{7F}trics HTTP/1.1\r\nHost: a\r\n\r\n", "DEL in the target"),
            ("GET /métrics HTTP/1.1\r\nHost: a\r\n\r\n", "non-ASCII in the target"),
            ("GET /metrics HTTP/1.x\r\nHost: a\r\n\r\n", "a version that is not digits"),
            ("GET /metrics http/1.1\r\nHost: a\r\n\r\n", "a lower-case protocol name"),
            ("GET /metrics HTTP/11\r\nHost: a\r\n\r\n", "no dot in the version"),
            ("GET /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 without Host"),
            ("GET /metrics HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "two Host fields"),
            ("GET /metrics HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", "obsolete line folding"),
            ("GET /metrics HTTP/1.1\r\nHost : a\r\n\r\n", "a blank before the colon"),
            ("GET /metrics HTTP/1.1\r\nHost a\r\n\r\n", "no colon"),
            ("GET /metrics HTTP/1.1\r\n: a\r\nHost: a\r\n\r\n", "an empty field name"),
            ("GET /metrics HTTP/1.1\r\nHost: a\u{1}b\r\n\r\n", "a control byte in a value"),
            ("GET /metrics HTTP/1.1\rHost: a\r\n\r\n", "a bare CR"),
        ]
        for (text, why) in table {
            guard case .failed(.malformed) = parse(text) else {
                XCTFail("\(why): expected malformed, got \(parse(text)) for \(text.debugDescription)")
                continue
            }
        }
    }

    /// Garbage is answered as soon as its first line ends, without waiting for an empty line that may never come.
    func testABadRequestLineFailsAtItsEnd() {
        guard case .failed(.malformed) = parse("SSH-2.0-OpenSSH_9.2\r\n") else {
            return XCTFail("a bad request line should fail when it ends")
        }
    }

    func testOtherHTTPVersionsAreUnsupported() {
        XCTAssertEqual(parse("GET /metrics HTTP/2.0\r\n\r\n"), .failed(.unsupportedVersion))
        XCTAssertEqual(parse("GET /metrics HTTP/0.9\r\n\r\n"), .failed(.unsupportedVersion))
    }

    func testTheHeadSizeLimit() {
        let request = "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\n"
        XCTAssertEqual(parse(request, maxHeadBytes: request.utf8.count), head(parse(request)).map { .complete($0) })
        XCTAssertEqual(parse(request, maxHeadBytes: request.utf8.count - 1), .failed(.tooLarge))
        // A line that never ends is refused at the limit, not buffered without end.
        XCTAssertEqual(parse("GET /" + String(repeating: "a", count: 9000), maxHeadBytes: 8192), .failed(.tooLarge))
    }

    /// Random bytes never crash it, and it never holds more than the limit.
    func testRandomBytes() {
        var random = SeededGenerator(seed: 9)
        for _ in 0..<300 {
            var parser = HTTPRequestHeadParser(maxHeadBytes: 256)
            let alphabet = Array("GET /metrics HTTP/1.1\r\n: Host\t\u{0}\u{7F}é".utf8)
            let input = (0..<Int.random(in: 0...400, using: &random)).map { _ in
                alphabet.randomElement(using: &random)!
            }
            parser.consume(input)
            if input.count > 256, parser.outcome == .needMore { XCTFail("more than the limit was taken: \(input)") }
        }
    }
}
