import XCTest

@testable import SubscriptionProtocol

/// Every command, in its usual and unusual spellings, fed in every mode.
final class ParserCommandTests: XCTestCase {
    func testHello() {
        assertParses("HELLO\n", [.success(.hello(name: nil, token: nil))])
        assertParses("HELLO name=alice\n", [.success(.hello(name: "alice", token: nil))])
        assertParses("HELLO token=s3cr=t\n", [.success(.hello(name: nil, token: "s3cr=t"))])
        assertParses("HELLO name=alice token=x\n", [.success(.hello(name: "alice", token: "x"))])
        assertParses("hello   token=x   name=bob  \r\n", [.success(.hello(name: "bob", token: "x"))])
        assertParses("HELLO name=Zoë\n", [.success(.hello(name: "Zoë", token: nil))])
        let longest = String(repeating: "n", count: 64)
        assertParses("HELLO name=\(longest)\n", [.success(.hello(name: longest, token: nil))])
    }

    func testRetainedNumbersGetAndListKinds() {
        assertParses("CREATE R retain\n", [.success(.create(number: "R", retained: true))])
        assertParses("create  R  retain \r\n", [.success(.create(number: "R", retained: true))])
        assertParses("GET R.x\n", [.success(.get(number: "R.x"))])
        assertParses("get R\r\n", [.success(.get(number: "R"))])
        assertParses("LIST > kind\n", [.success(.list(pattern: ">", kinds: true))])
        assertParses("LIST kind\n", [.success(.list(pattern: "kind", kinds: false))])  // one argument is the pattern
    }

    func testCreateAndRemove() {
        assertParses("CREATE SCIENCE\n", [.success(.create(number: "SCIENCE", retained: false))])
        assertParses("create SCIENCE.physics\r\n", [.success(.create(number: "SCIENCE.physics", retained: false))])
        assertParses("  CrEaTe   a.b.c   \n", [.success(.create(number: "a.b.c", retained: false))])
        assertParses("REMOVE SCIENCE\n", [.success(.remove(number: "SCIENCE"))])
        assertParses("remove ÉTÉ\n", [.success(.remove(number: "ÉTÉ"))])
        let longest = String(repeating: "x", count: 200)
        assertParses("CREATE \(longest)\n", [.success(.create(number: longest, retained: false))])
    }

    func testSubscribeAndUnsubscribe() {
        assertParses("SUB SCIENCE\n", [.success(.subscribe(pattern: "SCIENCE", from: nil, group: nil))])
        assertParses("SUB SCIENCE.*\n", [.success(.subscribe(pattern: "SCIENCE.*", from: nil, group: nil))])
        assertParses("sub >\n", [.success(.subscribe(pattern: ">", from: nil, group: nil))])
        assertParses("SUB *.b.> from=alice\n", [.success(.subscribe(pattern: "*.b.>", from: "alice", group: nil))])
        assertParses("SUB  a   from=alice  \r\n", [.success(.subscribe(pattern: "a", from: "alice", group: nil))])
        assertParses("SUB a group=workers\n", [.success(.subscribe(pattern: "a", from: nil, group: "workers"))])
        assertParses(
            "SUB a.> group=w from=alice\n", [.success(.subscribe(pattern: "a.>", from: "alice", group: "w"))])
        assertParses("UNSUB SCIENCE.>\n", [.success(.unsubscribe(pattern: "SCIENCE.>"))])
        assertParses("unsub a\n", [.success(.unsubscribe(pattern: "a"))])
    }

    func testList() {
        assertParses("LIST\n", [.success(.list(pattern: nil, kinds: false))])
        assertParses("list   \r\n", [.success(.list(pattern: nil, kinds: false))])
        assertParses("LIST SCIENCE.*\n", [.success(.list(pattern: "SCIENCE.*", kinds: false))])
    }

    func testStatsAndQuit() {
        assertParses("STATS\n", [.success(.stats)])
        assertParses("stats\r\n", [.success(.stats)])
        assertParses("QUIT\n", [.success(.quit)])
        assertParses(" Quit \n", [.success(.quit)])
    }

    func testPing() {
        assertParses("PING\n", [.success(.ping(text: nil))])
        assertParses("PING   \n", [.success(.ping(text: nil))])
        assertParses("PING hello\n", [.success(.ping(text: "hello"))])
        assertParses("ping   hello  world \r\n", [.success(.ping(text: "hello  world "))])
        assertParses("PING \t\n", [.success(.ping(text: "\t"))])
    }

    func testSendTakesEverythingAfterTheOneSpace() {
        assertParses("SEND SCIENCE V1.0\n", [send("SCIENCE", "V1.0")])
        assertParses("SEND N  x\n", [send("N", " x")])
        assertParses("SEND N x  \n", [send("N", "x  ")])
        assertParses("SEND N hello world\r\n", [send("N", "hello world")])
        assertParses("send   N a b\n", [send("N", "a b")])
        assertParses("SEND N \n", [send("N", "")])
        assertParses("SEND N \r\n", [send("N", "")])
        assertParses("SEND N x\r\r\n", [send("N", "x\r")])
        assertParses("SEND N PUB N 5\n", [send("N", "PUB N 5")])
    }

    func testPublish() {
        assertParses("PUB SCIENCE 5\nV2.0!\n", [publish("SCIENCE", bytes("V2.0!"))])
        assertParses("pub SCIENCE 5\r\nV2.0!\r\n", [publish("SCIENCE", bytes("V2.0!"))])
        assertParses("PUB N 0\n\n", [publish("N", [])])
        assertParses("PUB N 0\r\n\r\n", [publish("N", [])])
        assertParses("PUB N 007\nabcdefg\n", [publish("N", bytes("abcdefg"))])
        assertParses("PUB N 0000000003\nabc\n", [publish("N", bytes("abc"))])
        assertParses("PUB N 3\n\n\n\n\n", [publish("N", bytes("\n\n\n"))])
        assertParses("PUB N 2\n\r\n\n", [publish("N", bytes("\r\n"))])
        assertParses("PUB N 1\n\r\r\n", [publish("N", bytes("\r"))])
        assertParses("  PUB  N  4  \nPING\n", [publish("N", bytes("PING"))])
    }

    func testPublishPayloadIsBinarySafe() {
        let payload = (0...255).map { UInt8($0) }
        assertParses(bytes("PUB BIN 256\n") + payload + [0x0A], [publish("BIN", payload)])
        assertParses(bytes("PUB BIN 256\r\n") + payload + [0x0D, 0x0A], [publish("BIN", payload)])
    }

    func testBlankLinesAreSkipped() {
        assertParses("\n", [])
        assertParses("\r\n   \n \r \r\n\n", [])
        assertParses("\n\nPING\n\r\n  \nQUIT\n", [.success(.ping(text: nil)), .success(.quit)])
    }

    func testNoCommandUntilTheLF() {
        var parser = CommandParser()
        parser.append(contentsOf: bytes("PING hi"))
        XCTAssertNil(parser.next())
        parser.append(contentsOf: bytes("\r"))
        XCTAssertNil(parser.next())
        parser.append(contentsOf: bytes("\n"))
        XCTAssertEqual(parser.next(), .success(.ping(text: "hi")))
        XCTAssertNil(parser.next())
    }

    func testPublishWaitsForTheWholeFrame() {
        var parser = CommandParser()
        parser.append(contentsOf: bytes("PUB N 3\n"))
        XCTAssertNil(parser.next())
        parser.append(contentsOf: bytes("abc"))
        XCTAssertNil(parser.next(), "needs the LF after the payload")
        parser.append(contentsOf: bytes("\r"))
        XCTAssertNil(parser.next(), "a CR must be followed by LF")
        parser.append(contentsOf: bytes("\nQUIT\n"))
        XCTAssertEqual(parser.next(), publish("N", bytes("abc")))
        XCTAssertEqual(parser.next(), .success(.quit))
        XCTAssertNil(parser.next())
        XCTAssertEqual(parser.bufferedByteCount, 0)
    }

    func testPayloadIsASliceOfTheBufferAndSurvivesLaterAppends() {
        var parser = CommandParser()
        parser.append(contentsOf: bytes("PUB N 5\nhello\nPUB N 5\nwor"))
        guard case .success(.publish(_, let first, _)) = parser.next() else { return XCTFail("expected PUB") }
        XCTAssertNil(parser.next())
        // The slice shares storage with the buffer; later appends (which compact) must not change it.
        parser.append(contentsOf: bytes("ld\n"))
        guard case .success(.publish(_, let second, _)) = parser.next() else { return XCTFail("expected PUB") }
        XCTAssertEqual(Array(first), bytes("hello"))
        XCTAssertEqual(Array(second), bytes("world"))
    }
}
