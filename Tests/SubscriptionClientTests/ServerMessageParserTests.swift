import SubscriptionWire
import TestSupport
import XCTest

@testable import SubscriptionClient

/// The reply parser must give the same messages however the bytes are chunked.
final class ServerMessageParserTests: XCTestCase {
    /// Every kind of server output, with a binary payload that holds LF, CR and invalid UTF-8.
    static let corpus: [UInt8] =
        Array("+OK subd 0.1.0 proto=1 session=1\n+OK created\r\n-ERR NOTFOUND no such number 'X'\n".utf8)
        + Array("*3\nA.b 1\nMSG B 2\n+C 3\n*0\nMSG SCIENCE 4\nV1.0\n".utf8)
        + Array("MSG SCIENCE 5 from=alice x=y\n".utf8) + [0x00, 0x0A, 0x0D, 0xFF, 0x01, 0x0A]
        + Array("\nHELLO world\nGONE SCIENCE\nmsg lower 0\n\n+PONG\n-ERR TOOBIG\n*2\r\nGONE X\r\n\r\n".utf8)
        + Array("MSG SCIENCE 4 from=lab unit=EUR price=12\nV1.1\n".utf8)
        + Array("MSG N.x 3 from=lab rev=7 group=workers $trace=t1 unit=EUR =v bare 9lives=x a=b=c ".utf8)
        + Array("price=12%25 $=\n".utf8)
        + Array("a\nb\nMSG N 1 unit=EUR rev=x unit=USD\n!\n".utf8)

    static let expected: [ServerMessage] = [
        .reply(.ok("OK subd 0.1.0 proto=1 session=1")),
        .reply(.ok("OK created")),
        .reply(.error(code: .notFound, message: "no such number 'X'")),
        .reply(.list(["A.b 1", "MSG B 2", "+C 3"])),
        .reply(.list([])),
        .message(ReceivedMessage(number: "SCIENCE", payload: Array("V1.0".utf8))),
        .message(
            ReceivedMessage(
                number: "SCIENCE", payload: [0x00, 0x0A, 0x0D, 0xFF, 0x01], from: "alice",
                info: [InfoPair(key: "x", value: "y")])
        ),
        .gone(number: "SCIENCE"),
        .message(ReceivedMessage(number: "lower", payload: [])),
        .reply(.ok("PONG")),
        .reply(.error(code: .tooBig, message: "")),
        .reply(.list(["GONE X", ""])),
        .message(
            ReceivedMessage(
                number: "SCIENCE", payload: Array("V1.1".utf8), from: "lab",
                info: [InfoPair(key: "unit", value: "EUR"), InfoPair(key: "price", value: "12")])),
        // The server's own keys are taken apart; `$` keys, words without a key and keys that break the info-key
        // rule are ignored; a value is everything after the first `=`, as sent.
        .message(
            ReceivedMessage(
                number: "N.x", payload: Array("a\nb".utf8), from: "lab", revision: 7, group: "workers",
                info: [
                    InfoPair(key: "unit", value: "EUR"), InfoPair(key: "a", value: "b=c"),
                    InfoPair(key: "price", value: "12%25"),
                ])),
        .message(
            ReceivedMessage(
                number: "N", payload: Array("!".utf8),
                info: [InfoPair(key: "unit", value: "EUR"), InfoPair(key: "unit", value: "USD")])),
    ]

    func testWholeInput() throws {
        XCTAssertEqual(try Self.parse([Self.corpus]), Self.expected)
    }

    func testOneByteAtATime() throws {
        XCTAssertEqual(try Self.parse(Self.corpus.map { [$0] }), Self.expected)
    }

    func testRandomChunksAreParsedAlike() throws {
        for seed in UInt64(1)...200 {
            var random = SeededGenerator(seed: seed)
            var chunks: [[UInt8]] = []
            var index = 0
            while index < Self.corpus.count {
                let size = Int(random.next() % 12) + 1
                let end = min(index + size, Self.corpus.count)
                chunks.append(Array(Self.corpus[index..<end]))
                index = end
            }
            XCTAssertEqual(try Self.parse(chunks), Self.expected, "seed \(seed)")
        }
    }

    func testMessageDetails() throws {
        let messages = try Self.parse([Self.corpus])
        guard case .message(let message) = messages[6] else { return XCTFail("no message at 6") }
        XCTAssertEqual(message.from, "alice")
        XCTAssertNil(message.text, "a payload with 0xFF is not UTF-8")
        guard case .message(let plain) = messages[5] else { return XCTFail("no message at 5") }
        XCTAssertNil(plain.from)
        XCTAssertEqual(plain.text, "V1.0")
        XCTAssertEqual(plain.info, [:])
        XCTAssertEqual(plain.infoPairs, [])
        XCTAssertNil(plain.revision)
        XCTAssertNil(plain.group)
    }

    /// `MSG SCIENCE 4 from=lab unit=EUR price=12`: the info pairs as a dictionary and in order, apart from `from`.
    func testInfoPairs() throws {
        let messages = try Self.parse([Self.corpus])
        guard case .message(let message) = messages[12] else { return XCTFail("no message at 12: \(messages)") }
        XCTAssertEqual(message.from, "lab")
        XCTAssertEqual(message.info, ["unit": "EUR", "price": "12"])
        XCTAssertEqual(message.infoPairs.map(\.key), ["unit", "price"])
        XCTAssertNil(message.info["from"], "from is the server's key, not an info pair")
        guard case .message(let keyed) = messages[13] else { return XCTFail("no message at 13") }
        XCTAssertEqual(keyed.revision, 7)
        XCTAssertEqual(keyed.group, "workers")
        XCTAssertEqual(keyed.info, ["unit": "EUR", "a": "b=c", "price": "12%25"], "values exactly as sent")
        XCTAssertNil(keyed.info["$trace"])
        guard case .message(let repeated) = messages[14] else { return XCTFail("no message at 14") }
        XCTAssertEqual(repeated.info, ["unit": "EUR"], "a key sent twice: the first value")
        XCTAssertNil(repeated.revision, "rev= that is not a count is ignored")
    }

    /// Regression: words were split on Characters, so a number starting with a combining mark (valid: any UTF-8
    /// without spaces or control characters) glued to the space before it and the payload was read as a reply.
    func testNumberStartingWithACombiningMark() throws {
        let number = "\u{301}X"
        let input = Array("MSG \(number) 5\n+OK 7\nGONE \(number)\n".utf8)
        let messages = try Self.parse([input])
        XCTAssertEqual(messages.count, 2, "\(messages)")
        guard case .message(let message) = messages.first else { return XCTFail("no message: \(messages)") }
        XCTAssertEqual(Array(message.number.utf8), Array(number.utf8))
        XCTAssertEqual(message.text, "+OK 7")
        guard case .gone(let gone) = messages.last else { return XCTFail("no GONE: \(messages)") }
        XCTAssertEqual(Array(gone.utf8), Array(number.utf8))
    }

    func testIncompleteInputWaitsForMore() throws {
        var parser = ServerMessageParser()
        parser.append(Array("MSG X 5\nab".utf8))
        XCTAssertNil(try parser.next())
        parser.append(Array("cde".utf8))
        XCTAssertNil(try parser.next(), "the LF after the payload has not come yet")
        parser.append(Array("\n*2\nx\n".utf8))
        XCTAssertEqual(try parser.next(), .message(ReceivedMessage(number: "X", payload: Array("abcde".utf8))))
        XCTAssertNil(try parser.next(), "a list is returned whole")
        parser.append(Array("y\n".utf8))
        XCTAssertEqual(try parser.next(), .reply(.list(["x", "y"])))
        XCTAssertNil(try parser.next())
        XCTAssertEqual(parser.bufferedByteCount, 0)
    }

    func testLargePayloadInManyChunks() throws {
        var payload: [UInt8] = []
        var random = SeededGenerator(seed: 7)
        for _ in 0..<300_000 { payload.append(UInt8(truncatingIfNeeded: random.next())) }
        var input = Array("MSG BIG \(payload.count) from=me\n".utf8) + payload + [0x0A] + Array("+OK 1\n".utf8)
        input += Array("GONE BIG\n".utf8)
        var parser = ServerMessageParser()
        var messages: [ServerMessage] = []
        var index = 0
        while index < input.count {
            let end = min(index + 4093, input.count)
            parser.append(input[index..<end])
            while let message = try parser.next() { messages.append(message) }
            index = end
        }
        XCTAssertEqual(
            messages,
            [
                .message(ReceivedMessage(number: "BIG", payload: payload, from: "me")),
                .reply(.ok("OK 1")), .gone(number: "BIG"),
            ])
    }

    /// Server bytes that break the protocol, and why.
    static let malformed: [(String, [UInt8])] = [
        ("-ERR without a code", Array("-ERR\n".utf8)),
        ("- line that is not ERR", Array("-OOPS CODE text\n".utf8)),
        ("bare -", Array("-\n".utf8)),
        ("list without a count", Array("*\n".utf8)),
        ("list count not a number", Array("*x\n".utf8)),
        ("negative list count", Array("*-1\n".utf8)),
        ("list count with exponent", Array("*1e3\n".utf8)),
        ("list count overflowing Int", Array("*99999999999999999999\n".utf8)),
        ("list count over the limit", Array("*16777217\n".utf8)),
        ("MSG without arguments", Array("MSG\n".utf8)),
        ("MSG without a size", Array("MSG X\n".utf8)),
        ("MSG size not a number", Array("MSG X abc\n".utf8)),
        ("MSG negative size", Array("MSG X -1\n".utf8)),
        ("MSG size overflowing Int", Array("MSG X 99999999999999999999\n".utf8)),
        ("MSG payload longer than said", Array("MSG X 3\nabcd\n".utf8)),
        ("MSG payload followed by CR LF", Array("MSG X 3\nabc\r\n".utf8)),
        ("GONE without a number", Array("GONE\n".utf8)),
        ("GONE with two words", Array("GONE A B\n".utf8)),
        ("a line that is not UTF-8", Array("+OK ".utf8) + [0xFF, 0xFE, 0x0A]),
        ("a list line that is not UTF-8", Array("*1\n".utf8) + [0xC3, 0x28, 0x0A]),
        ("an error code the contract does not have", Array("-ERR NOPE no such code\n".utf8)),
        ("an error code in lower case", Array("-ERR notfound no such number\n".utf8)),
    ]

    func testMalformedInputIsAProtocolViolation() {
        for (what, input) in Self.malformed {
            for chunks in [[input], input.map { [$0] }] {
                XCTAssertThrowsError(try Self.parse(chunks), what) { error in
                    guard case .protocolViolation = error as? ClientError else {
                        return XCTFail("\(what): \(error) is not a protocol violation")
                    }
                }
            }
        }
    }

    func testViolationSpendsTheParser() throws {
        var parser = ServerMessageParser()
        parser.append(Array("*x\n+OK\n".utf8))
        XCTAssertThrowsError(try parser.next())
        parser.append(Array("+OK\n".utf8))
        XCTAssertThrowsError(try parser.next(), "a spent parser keeps failing")
    }

    func testLineOverTheLimitFailsBeforeItsLF() {
        var parser = ServerMessageParser(maxLineLength: 16)
        parser.append(Array("+OK 0123456789".utf8))
        XCTAssertNoThrow(try parser.next())
        parser.append(Array("abcdef".utf8))
        XCTAssertThrowsError(try parser.next())
    }

    func testLineAtTheLimitIsAccepted() throws {
        var parser = ServerMessageParser(maxLineLength: 16)
        parser.append(Array("+OK 012345678901\r\n".utf8))
        XCTAssertEqual(try parser.next(), .reply(.ok("OK 012345678901")))
    }

    func testPayloadOverTheLimitFails() throws {
        var parser = ServerMessageParser(maxPayload: 8)
        parser.append(Array("MSG X 8\n12345678\nMSG X 9\n".utf8))
        XCTAssertEqual(try parser.next(), .message(ReceivedMessage(number: "X", payload: Array("12345678".utf8))))
        XCTAssertThrowsError(try parser.next())
    }

    /// Parses all `chunks`, draining the parser after each.
    static func parse(_ chunks: [[UInt8]]) throws -> [ServerMessage] {
        var parser = ServerMessageParser()
        var messages: [ServerMessage] = []
        for chunk in chunks {
            parser.append(chunk)
            while let message = try parser.next() { messages.append(message) }
        }
        XCTAssertEqual(parser.bufferedByteCount, 0, "bytes left over")
        return messages
    }
}
