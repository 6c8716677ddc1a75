import SubscriptionWire
import XCTest

@testable import SubscriptionProtocol

/// Malformed input: the error code, whether the connection closes, and what the stream does afterwards.
final class ParserMalformedTests: XCTestCase {
    /// One malformed input. `PING after` is sent right behind it: it must parse when the connection stays open,
    /// and never be seen when it closes.
    struct Case {
        var input: [UInt8]
        var code: ErrorCode
        var closes: Bool
        var message: String?
        var line: UInt

        init(_ input: String, _ code: ErrorCode, closes: Bool = false, message: String? = nil, line: UInt = #line) {
            self.init(bytes(input), code, closes: closes, message: message, line: line)
        }

        init(_ input: [UInt8], _ code: ErrorCode, closes: Bool = false, message: String? = nil, line: UInt = #line) {
            self.input = input
            self.code = code
            self.closes = closes
            self.message = message
            self.line = line
        }
    }

    static let limits = ProtocolLimits(maxLine: 300, maxPayload: 1000)

    static let cases: [Case] = [
        // Unknown verbs.
        Case("FOO\n", .unknown, message: "unknown command 'FOO'"),
        Case("PUBX a 1\n", .unknown, message: "unknown command 'PUBX'"),
        Case("\tPING\n", .unknown, message: "unknown command '?PING'"),
        Case([0x01, 0x7F, 0x42, 0x0A], .unknown, message: "unknown command '??B'"),
        Case([0x00, 0x50, 0x55, 0x42, 0x20, 0x41, 0x20, 0x31, 0x0A], .unknown, message: "unknown command '?PUB'"),
        Case("PING\rX\n", .unknown),
        Case(
            String(repeating: "V", count: 40) + " x\n", .unknown,
            message: "unknown command '\(String(repeating: "V", count: 32))...'"),
        // Argument counts.
        Case("CREATE\n", .proto, message: "missing argument; usage: CREATE <number> [retain]"),
        Case("CREATE a b\n", .proto, message: "unexpected argument 'b'; usage: CREATE <number> [retain]"),
        Case("CREATE a retain b\n", .proto, message: "too many arguments; usage: CREATE <number> [retain]"),
        Case("CREATE a RETAIN\n", .proto),
        Case("GET\n", .proto, message: "missing argument; usage: GET <number>"),
        Case("GET a b\n", .proto),
        Case("GET a.*\n", .name),
        Case("LIST a b\n", .proto, message: "unexpected argument 'b'; usage: LIST [<pattern> [kind]]"),
        Case("LIST a kind b\n", .proto),
        Case("REMOVE\n", .proto),
        Case("REMOVE a b\n", .proto),
        Case("UNSUB\n", .proto),
        Case("UNSUB a b\n", .proto),
        Case("SUB\n", .proto),
        Case(
            "SUB a b\n", .proto,
            message: "unexpected argument 'b'; usage: SUB <pattern> [from=<client-name>] [group=<group-name>]"),
        Case("SUB a from=x extra\n", .proto),
        Case("SUB a group=\n", .proto),
        Case("SUB a group=x group=y\n", .proto),
        Case("SUB a group=x from=y from=z\n", .proto),
        Case(
            "SUB a foo=bar\n", .proto,
            message: "unknown key 'foo='; usage: SUB <pattern> [from=<client-name>] [group=<group-name>]"),
        Case("SUB a FROM=x\n", .proto),
        Case("SUB a from=\n", .proto),
        Case("SUB a from=" + String(repeating: "c", count: 65) + "\n", .proto),
        Case("STATS x\n", .proto, message: "too many arguments; usage: STATS"),
        Case("QUIT now\n", .proto),
        Case("SEND\n", .proto),
        Case("SEND a\n", .proto),
        Case("SEND a\r\n", .proto),
        // HELLO.
        Case("HELLO alice\n", .proto),
        Case(
            "HELLO name=a name=b\n", .proto,
            message:
                "name= given more than once; usage: HELLO [name=<client-name>] [token=<secret>]"),
        Case("HELLO token=a token=b\n", .proto),
        Case("HELLO name=a token=b x=c\n", .proto),
        Case("HELLO user=a\n", .proto),
        Case("HELLO =a\n", .proto),
        Case("HELLO name=\n", .proto),
        Case("HELLO token=\n", .proto),
        Case("HELLO name=" + String(repeating: "c", count: 65) + "\n", .proto),
        Case(bytes("HELLO name=a") + [0x7F] + bytes("\n"), .proto),
        Case(bytes("HELLO name=a") + [0x01] + bytes("\n"), .proto),
        Case(bytes("HELLO name=") + [0xFF, 0xFE] + bytes("\n"), .proto),
        Case(
            bytes("HELLO token=") + [0xC3] + bytes("\n"), .proto,
            message: "invalid token: it must be at least 1 byte of UTF-8 with no space or control character"),
        // PUB headers: PROTO, nothing else consumed.
        Case("PUB\n", .proto),
        Case("PUB a\n", .proto),
        Case("PUB a x\n", .proto),
        Case("PUB a -1\n", .proto),
        Case("PUB a +1\n", .proto),
        Case("PUB a 1x\n", .proto),
        Case("PUB a 0x10\n", .proto),
        // A size over max_payload is TOOBIG and closes, however many digits it has (it used to be PROTO past 10
        // digits, and the bytes after it were read as commands).
        Case("PUB a 1001\n", .tooBig, closes: true, message: "payload of 1001 bytes is over the limit of 1000 bytes"),
        Case(
            "PUB a 12345678901\n", .tooBig, closes: true,
            message: "payload of 12345678901 bytes is over the limit of 1000 bytes"),
        Case("PUB a 99999999999999999999999999999999\n", .tooBig, closes: true),
        // Names.
        Case(
            "CREATE a..b\n", .name,
            message: "invalid number 'a..b': has an empty token (two dots in a row, or a dot at an end)"),
        Case(
            "CREATE *\n", .name,
            message: "invalid number '*': has a wildcard token ('*' or '>'), which a number may not have"),
        Case("REMOVE .a\n", .name),
        Case(
            "CREATE " + String(repeating: "x", count: 201) + "\n", .name,
            message: "invalid number '\(String(repeating: "x", count: 64))...': is 201 bytes long (at most 200)"),
        Case(
            bytes("CREATE a") + [0x01] + bytes("b\n"), .name,
            message: "invalid number 'a?b': holds the control character 0x1"),
        Case(bytes("CREATE ") + [0xFF] + bytes("\n"), .name, message: "invalid number '\u{FFFD}': is not valid UTF-8"),
        Case("SUB a.>.b\n", .name, message: "invalid pattern 'a.>.b': has '>' before its last token"),
        Case("SUB a.. from=x\n", .name),
        Case("UNSUB a.\n", .name),
        Case("LIST a..\n", .name),
        Case("SEND * x\n", .name),
        Case("SEND a..b  text\n", .name),
        Case("PUB a..b 3\nabc\n", .name),
        Case(
            "PUB a.* 3\r\nabc\r\n", .name,
            message: "invalid number 'a.*': has a wildcard token ('*' or '>'), which a number may not have"),
        Case("PUB > 0\n\n", .name),
        // Too big: closes.
        Case("PUB a 1001\n", .tooBig, closes: true, message: "payload of 1001 bytes is over the limit of 1000 bytes"),
        Case("PUB a 9999999999\n", .tooBig, closes: true),
        Case("SEND a " + String(repeating: "t", count: 300) + "\n", .tooBig, closes: true),  // the line is too long
        Case(String(repeating: "P", count: 301) + "\n", .tooBig, closes: true, message: "line longer than 300 bytes"),
        Case(String(repeating: " ", count: 400) + "\n", .tooBig, closes: true),
        // A bad payload frame: closes.
        Case(
            "PUB a 3\nabcX", .proto, closes: true,
            message: "no LF after the 3-byte payload of PUB (nbytes must be the exact payload size)"),
        Case("PUB a 3\nabcd\n", .proto, closes: true),
        Case("PUB a 3\nabc\rX", .proto, closes: true),
        Case("PUB a 3\nabc\r\r\n", .proto, closes: true),
        Case("PUB a 0\nX\n", .proto, closes: true),
        Case("PUB a..b 3\nabcd\n", .proto, closes: true),
    ]

    func testMalformedInputs() {
        for entry in Self.cases {
            let input = entry.input + bytes("PING after\n")
            let results = parseInAllModes(input, limits: Self.limits, seeds: 0..<10, line: entry.line)
            guard let first = results.first, case .failure(let error) = first else {
                XCTFail("expected a failure first, got \(results)", line: entry.line)
                continue
            }
            XCTAssertEqual(error.code, entry.code, error.message, line: entry.line)
            XCTAssertEqual(error.closesConnection, entry.closes, error.message, line: entry.line)
            if let message = entry.message { XCTAssertEqual(error.message, message, line: entry.line) }
            let after = Array(results.dropFirst())
            XCTAssertEqual(after, entry.closes ? [] : [.success(.ping(text: "after"))], line: entry.line)
        }
    }

    func testTrailingSpacesAfterPubHeader() {
        assertParses("PUB a 5 \nhello\nPING\n", [publish("a", bytes("hello")), .success(.ping(text: nil))])
    }

    func testBadPayloadSizeConsumesOnlyTheLine() {
        // The bytes that were meant as the payload are read as commands.
        assertParses(
            "PUB N x\nQUIT\n",
            [
                .failure(
                    ProtocolError(
                        .proto,
                        "invalid payload size 'x': it must be ASCII digits; "
                            + "usage: PUB <number> <nbytes> [<key>=<value>...]")),
                .success(.quit),
            ])
    }

    func testAfterAClosingFailureTheParserStaysSilent() {
        var parser = CommandParser(limits: Self.limits)
        parser.append(contentsOf: bytes("PUB a 3\nabcX"))
        XCTAssertEqual(failureCode(parser.next()!), .proto)
        XCTAssertTrue(parser.isFinished)
        for _ in 0..<3 {
            parser.append(contentsOf: bytes("PING\nQUIT\n"))
            let written = parser.withWritableTail(minimumCapacity: 10) { space in
                space.copyBytes(from: bytes("PING\n"))
                return 5
            }
            XCTAssertEqual(written, 5, "the read is accepted, then dropped")
            XCTAssertNil(parser.next())
            XCTAssertEqual(parser.bufferedByteCount, 0)
        }
    }
}
