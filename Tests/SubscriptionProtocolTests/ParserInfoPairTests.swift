import XCTest

@testable import SubscriptionProtocol

/// `PUB <number> <nbytes> <key>=<value>...` (protocol 1.1, info pairs), fed whole, byte by byte and in random
/// chunks. A bad pair is `PROTO` answered after the payload is read, so the stream stays in step.
final class ParserInfoPairTests: XCTestCase {
    private let after: ParseResult = .success(.ping(text: "after"))

    func testPairsAreParsedInTheOrderGiven() {
        assertParses(
            "PUB SCIENCE 4 unit=EUR price=12\nV1.0\n",
            [publish("SCIENCE", bytes("V1.0"), info: ["unit=EUR", "price=12"])])
        assertParses(
            "PUB A 1   a.b-c_d=x%20y   Z9=%3D \r\nx\r\n", [publish("A", bytes("x"), info: ["a.b-c_d=x%20y", "Z9=%3D"])])
        assertParses("PUB A 0 k=é\n\n", [publish("A", [], info: ["k=é"])])
    }

    func testTheLimitsThemselvesAreAccepted() {
        let sixteen = (0..<16).map { "k\($0)=v" }
        assertParses("PUB A 1 \(sixteen.joined(separator: " "))\nx\n", [publish("A", bytes("x"), info: sixteen)])
        let key = "k" + String(repeating: "e", count: 63)
        let value = String(repeating: "v", count: 1024)
        assertParses(
            "PUB A 1 \(key)=\(value)\nx\n", [publish("A", bytes("x"), info: ["\(key)=\(value)"])],
            limits: ProtocolLimits(maxLine: 4096, maxPayload: 100))
    }

    /// Each bad header: `PROTO` once the payload is consumed, the connection open, and the next command parsed.
    func testBadPairsAreProtoAfterThePayload() {
        let valueRule =
            "an info value must be 1 to 1024 bytes of UTF-8 with no space, control character or '=' "
            + "(percent-encode them)"
        let bad: [(pairs: String, message: String)] = [
            ("extra", "'extra' is not an info pair <key>=<value>; usage: PUB <number> <nbytes> [<key>=<value>...]"),
            ("from=lab", "the info key 'from' is the server's own (from, rev, group and keys starting with '$')"),
            ("rev=1", "the info key 'rev' is the server's own (from, rev, group and keys starting with '$')"),
            ("group=g", "the info key 'group' is the server's own (from, rev, group and keys starting with '$')"),
            ("$sys=1", "an info key must be 1 to 64 ASCII letters, digits, '_', '-' or '.', starting with a letter"),
            ("1a=1", "an info key must be 1 to 64 ASCII letters, digits, '_', '-' or '.', starting with a letter"),
            ("=v", "an info key must be 1 to 64 ASCII letters, digits, '_', '-' or '.', starting with a letter"),
            (
                "k" + String(repeating: "e", count: 64) + "=v",
                "an info key must be 1 to 64 ASCII letters, digits, '_', '-' or '.', starting with a letter"
            ),
            ("kéy=v", "an info key must be 1 to 64 ASCII letters, digits, '_', '-' or '.', starting with a letter"),
            (
                "k=",
                valueRule
            ),
            (
                "k=a=b",
                valueRule
            ),
            (
                "k=" + String(repeating: "v", count: 1025),
                valueRule
            ),
            ("k=1 k=2", "the info key 'k' is given twice"),
            ((0..<17).map { "k\($0)=v" }.joined(separator: " "), "17 info pairs (at most 16)"),
            ((0..<20).map { "k\($0)=v" }.joined(separator: " "), "20 info pairs (at most 16)"),
        ]
        for (pairs, message) in bad {
            let results = parseInAllModes(
                bytes("PUB A 5 \(pairs)\nhello\nPING after\n"), limits: ProtocolLimits(maxLine: 4096, maxPayload: 100))
            XCTAssertEqual(results, [.failure(ProtocolError(.proto, message)), after], pairs)
        }
    }

    /// Regression: a value that was not UTF-8 was delivered with its bytes replaced (U+FFFD), not verbatim.
    func testAValueThatIsNotUTF8IsRefusedNotAltered() {
        let results = parseInAllModes(bytes("PUB A 1 k=") + [0xFF, 0xFE] + bytes("\nx\nPING after\n"))
        XCTAssertEqual(results.map(failureCode), [.proto, nil])
        XCTAssertEqual(results.last, after)
        assertParses("PUB A 1 k=caf\u{E9}\nx\n", [publish("A", bytes("x"), info: ["k=caf\u{E9}"])])
    }

    func testABadPairIsAnsweredOnlyOnceThePayloadIsThere() {
        var parser = CommandParser()
        parser.append(contentsOf: bytes("PUB A 5 from=x\nhel"))
        XCTAssertNil(parser.next(), "the payload is read first")
        parser.append(contentsOf: bytes("lo\n"))
        XCTAssertEqual(parser.next().flatMap(failureCode), .proto)
        XCTAssertNil(parser.next())
    }

    func testAnInvalidNumberIsStillNameWhenThePairsAreBadToo() {
        XCTAssertEqual(parseInAllModes(bytes("PUB a..b 1 from=x\nx\n")).map(failureCode), [.name])
    }
}

/// The pairs of one `PUB` never reach the next one, whatever ended the first.
final class ParserInfoPairIsolationTests: XCTestCase {
    func testPairsAndTheirErrorsStayWithTheirOwnPub() {
        let results = parseInAllModes(
            bytes("PUB a..b 1 k=v\nx\nPUB A 1\ny\nPUB A 1 from=x\nz\nPUB A 1\nw\nPUB A 1 k=v\nq\nPUB A 1\nr\n"))
        XCTAssertEqual(results.count, 6)
        guard results.count == 6 else { return }
        XCTAssertEqual(failureCode(results[0]), .name)
        XCTAssertEqual(results[1], publish("A", bytes("y")), "not the pairs of the PUB with a bad number")
        XCTAssertEqual(failureCode(results[2]), .proto)
        XCTAssertEqual(results[3], publish("A", bytes("w")), "not the error of the PUB before")
        XCTAssertEqual(results[4], publish("A", bytes("q"), info: ["k=v"]))
        XCTAssertEqual(results[5], publish("A", bytes("r")))
    }
}
