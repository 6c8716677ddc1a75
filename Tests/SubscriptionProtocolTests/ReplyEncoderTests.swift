import SubscriptionWire
import XCTest

@testable import SubscriptionProtocol

/// The exact bytes of every reply and push line.
final class ReplyEncoderTests: XCTestCase {
    func encoded(_ body: (inout [UInt8]) -> Void) -> String {
        var buffer: [UInt8] = []
        body(&buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    func testOk() {
        XCTAssertEqual(encoded { ReplyEncoder.ok(into: &$0) }, "+OK\n")
        XCTAssertEqual(encoded { ReplyEncoder.ok(nil, into: &$0) }, "+OK\n")
        XCTAssertEqual(encoded { ReplyEncoder.ok("", into: &$0) }, "+OK\n")
        XCTAssertEqual(encoded { ReplyEncoder.ok("created", into: &$0) }, "+OK created\n")
        XCTAssertEqual(
            encoded { ReplyEncoder.ok("subd 1.0 proto=1 session=7", into: &$0) },
            "+OK subd 1.0 proto=1 session=7\n")
        XCTAssertEqual(encoded { ReplyEncoder.ok("two\nlines\r", into: &$0) }, "+OK two lines \n")
    }

    func testOkCount() {
        XCTAssertEqual(encoded { ReplyEncoder.okCount(0, into: &$0) }, "+OK 0\n")
        XCTAssertEqual(encoded { ReplyEncoder.okCount(7, into: &$0) }, "+OK 7\n")
        XCTAssertEqual(encoded { ReplyEncoder.okCount(12, into: &$0) }, "+OK 12\n")
        for count in [0, 9, 10, 12_345, Int.max] {
            var space = [UInt8](repeating: 0xEE, count: ReplyEncoder.okCountMaxBytes + 1)
            let written = space.withUnsafeMutableBytes { ReplyEncoder.writeOkCount(count, to: $0.baseAddress!) }
            XCTAssertEqual(String(decoding: space[..<written], as: UTF8.self), "+OK \(count)\n")
            XCTAssertEqual(space[ReplyEncoder.okCountMaxBytes], 0xEE, "stays within okCountMaxBytes")
        }
        XCTAssertEqual(encoded { ReplyEncoder.okCount(1_000_000, into: &$0) }, "+OK 1000000\n")
        XCTAssertEqual(encoded { ReplyEncoder.okCount(Int.max, into: &$0) }, "+OK \(Int.max)\n")
        XCTAssertEqual(encoded { ReplyEncoder.okCount(-5, into: &$0) }, "+OK -5\n")
        XCTAssertEqual(encoded { ReplyEncoder.okCount(Int.min, into: &$0) }, "+OK \(Int.min)\n")
        for value in [1, 9, 10, 99, 100, 101, 999, 1000, 65_535] {
            XCTAssertEqual(encoded { ReplyEncoder.okCount(value, into: &$0) }, "+OK \(value)\n")
        }
    }

    func testPong() {
        XCTAssertEqual(encoded { ReplyEncoder.pong(nil, into: &$0) }, "+PONG\n")
        XCTAssertEqual(encoded { ReplyEncoder.pong("hello  world ", into: &$0) }, "+PONG hello  world \n")
    }

    func testError() {
        let notFound = ProtocolError(.notFound, "no number 'SCIENCE'")
        XCTAssertEqual(encoded { ReplyEncoder.error(notFound, into: &$0) }, "-ERR NOTFOUND no number 'SCIENCE'\n")
        let multiline = ProtocolError(.proto, "a\r\nb\nc", closesConnection: true)
        XCTAssertEqual(encoded { ReplyEncoder.error(multiline, into: &$0) }, "-ERR PROTO a  b c\n")
        XCTAssertEqual(encoded { ReplyEncoder.error(ProtocolError(.auth, ""), into: &$0) }, "-ERR AUTH\n")
        let codes: [ErrorCode: String] = [
            .proto: "PROTO", .unknown: "UNKNOWN", .name: "NAME", .notFound: "NOTFOUND", .tooBig: "TOOBIG",
            .auth: "AUTH", .denied: "DENIED", .limit: "LIMIT",
        ]
        XCTAssertEqual(codes.count, ErrorCode.allCases.count)
        for (code, text) in codes {
            XCTAssertEqual(encoded { ReplyEncoder.error(ProtocolError(code, "why"), into: &$0) }, "-ERR \(text) why\n")
        }
    }

    func testParserErrorsEncodeAsOneLine() {
        var parser = CommandParser()
        parser.append(contentsOf: bytes("CREATE a..b\n"))
        guard case .failure(let error) = parser.next() else { return XCTFail("expected a failure") }
        XCTAssertEqual(
            encoded { ReplyEncoder.error(error, into: &$0) },
            "-ERR NAME invalid number 'a..b': has an empty token (two dots in a row, or a dot at an end)\n")
    }

    func testList() {
        XCTAssertEqual(encoded { ReplyEncoder.list([], into: &$0) }, "*0\n")
        XCTAssertEqual(
            encoded { ReplyEncoder.list(["SCIENCE 2", "SCIENCE.physics 0"], into: &$0) },
            "*2\nSCIENCE 2\nSCIENCE.physics 0\n")
        XCTAssertEqual(encoded { ReplyEncoder.list(["bad\nline"], into: &$0) }, "*1\nbad line\n")
        let many = (0..<12).map { "n\($0) \($0)" }
        XCTAssertEqual(encoded { ReplyEncoder.list(many, into: &$0) }, "*12\n" + many.map { $0 + "\n" }.joined())
    }

    func testGone() {
        XCTAssertEqual(encoded { ReplyEncoder.gone("SCIENCE.physics", into: &$0) }, "GONE SCIENCE.physics\n")
    }

    func testRepliesAppendToWhatIsAlreadyThere() {
        var buffer = bytes("MSG A 1\nx\n")
        ReplyEncoder.okCount(1, into: &buffer)
        ReplyEncoder.ok("bye", into: &buffer)
        XCTAssertEqual(String(decoding: buffer, as: UTF8.self), "MSG A 1\nx\n+OK 1\n+OK bye\n")
    }
}
