import XCTest

/// HELLO, PING, QUIT, case-insensitive verbs, CRLF and blank lines.
final class HandshakeTests: IntegrationTestCase {
    func testHelloRepliesWithVersionProtocolAndSession() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        for hello in ["HELLO", "HELLO name=alice"] {
            let reply = try client.command(hello)
            guard case .status(let text) = reply else {
                XCTFail("\(hello): expected +OK subd ..., got \(reply)")
                continue
            }
            XCTAssertNotNil(
                text.wholeMatch(of: /OK subd [^ ]+ proto=1\.1 session=[^ ]+/),
                "\(hello): reply '+\(text)' is not '+OK subd <version> proto=1.1 session=<id>'")
        }
    }

    func testHelloGivesEachSessionItsOwnId() throws {
        let daemon = try startDaemon()
        var ids: Set<String> = []
        for index in 0..<3 {
            let client = try connect(daemon, "client \(index)")
            let reply = try client.command("HELLO")
            guard case .status(let text) = reply, let match = text.firstMatch(of: /session=([^ ]+)/) else {
                XCTFail("HELLO: no session=<id> in \(reply)")
                continue
            }
            ids.insert(String(match.output.1))
        }
        XCTAssertEqual(ids.count, 3, "three sessions should get three different ids, got \(ids)")
    }

    func testPingWithoutTextRepliesPong() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        XCTAssertEqual(try client.command("PING"), .status("PONG"))
    }

    func testPingWithTextEchoesIt() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        XCTAssertEqual(try client.command("PING hello"), .status("PONG hello"))
    }

    func testQuitRepliesByeThenServerCloses() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        XCTAssertEqual(try client.command("QUIT"), .ok("bye"))
        try client.expectClosed()
        assertOpen(try connect(daemon, "other"), "another client after QUIT")
    }

    func testVerbsAreCaseInsensitive() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        XCTAssertEqual(try client.command("ping"), .status("PONG"))
        XCTAssertEqual(try client.command("PiNg"), .status("PONG"))
        XCTAssertEqual(try client.command("create LOWER"), .ok("created"))
        XCTAssertEqual(try client.command("Sub LOWER"), .ok())
        XCTAssertEqual(try client.command("send LOWER hi"), .ok("1"))
        XCTAssertEqual(try client.nextMessage(), Message("LOWER", text: "hi"))
        XCTAssertEqual(try client.command("unsub LOWER"), .ok())
        XCTAssertEqual(try client.command("list"), .list(["LOWER 0"]))
        guard case .list = try client.command("stats") else { return XCTFail("stats in lower case") }
        guard case .status(let hello) = try client.command("hello"), hello.hasPrefix("OK subd ") else {
            return XCTFail("hello in lower case")
        }
        XCTAssertEqual(try client.command("remove LOWER"), .ok("removed 0"))
        XCTAssertEqual(try client.command("quit"), .ok("bye"))
        try client.expectClosed()
    }

    func testCRLFLineEndingsAreAcceptedAndCRIsDropped() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        try client.send("PING\r\n")
        XCTAssertEqual(try client.readReply(), .status("PONG"))
        try client.send("PING abc\r\n")
        XCTAssertEqual(try client.readReply(), .status("PONG abc"))
        try client.send("CREATE CRLF\r\n")
        XCTAssertEqual(try client.readReply(), .ok("created"))
        try client.send("SUB CRLF\r\n")
        XCTAssertEqual(try client.readReply(), .ok())
        try client.send("SEND CRLF text\r\n")
        XCTAssertEqual(try client.readReply(), .ok("1"))
        XCTAssertEqual(try client.nextMessage().text, "text", "the CR before LF is not part of SEND's text")
        XCTAssertEqual(try listCounts(client), ["CRLF": 1], "the number is 'CRLF', without a CR")
    }

    func testBlankLinesGetNoReply() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        try client.send("\n\r\n\nPING one\n\nPING two\n")
        XCTAssertEqual(try client.readReply(), .status("PONG one"))
        XCTAssertEqual(try client.readReply(), .status("PONG two"))
        XCTAssertEqual(try client.command("PING three"), .status("PONG three"), "no extra reply for blank lines")
    }
}
