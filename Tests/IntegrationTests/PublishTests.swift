import XCTest

/// PUB and SEND: receiver counts, SEND's text, the MSG push format and who receives what.
final class PublishTests: IntegrationTestCase {
    func testExampleSessionOfProtocolDocument() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        XCTAssertEqual(try client.command("CREATE SCIENCE"), .ok("created"))
        XCTAssertEqual(try client.command("SUB SCIENCE"), .ok())
        XCTAssertEqual(try client.command("SEND SCIENCE V1.0"), .ok("1"))
        XCTAssertEqual(try client.nextMessage(), Message("SCIENCE", text: "V1.0"))
        try client.send("PUB SCIENCE 5\nV2.0!\n")
        XCTAssertEqual(try client.readReply(), .ok("1"))
        XCTAssertEqual(try client.nextMessage(), Message("SCIENCE", text: "V2.0!"))
    }

    func testPubAndSendReplyTheNumberOfReceivers() throws {
        let daemon = try startDaemon()
        let publisher = try connect(daemon, "publisher")
        try create(publisher, "COUNT")
        XCTAssertEqual(try publisher.pub("COUNT", Array("x".utf8)), .ok("0"))
        XCTAssertEqual(try publisher.command("SEND COUNT x"), .ok("0"))
        var subscribers: [LineClient] = []
        for index in 1...3 {
            let subscriber = try connect(daemon, "subscriber \(index)")
            try subscribe(subscriber, "COUNT")
            subscribers.append(subscriber)
            XCTAssertEqual(try publisher.pub("COUNT", Array("p\(index)".utf8)), .ok("\(index)"))
            XCTAssertEqual(try publisher.command("SEND COUNT s\(index)"), .ok("\(index)"))
        }
        for (index, subscriber) in subscribers.enumerated() {
            var expected: [String] = []
            for round in (index + 1)...3 { expected += ["p\(round)", "s\(round)"] }
            var got: [String] = []
            for _ in expected { got.append(try subscriber.nextMessage().text) }
            XCTAssertEqual(got, expected, "subscriber \(index + 1)")
        }
    }

    func testSendTextIsEverythingAfterTheOneSpaceAfterTheNumber() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        try create(client, "TEXT")
        try subscribe(client, "TEXT")
        let cases: [(line: String, text: String)] = [
            ("SEND TEXT hello world", "hello world"),
            ("SEND TEXT two  spaces   kept", "two  spaces   kept"),
            ("SEND TEXT  leading space", " leading space"),
            ("SEND TEXT trailing spaces  ", "trailing spaces  "),
            ("SEND TEXT tab\tinside", "tab\tinside"),
            ("SEND TEXT PUB TEXT 3", "PUB TEXT 3"),
            ("SEND TEXT ünïcödé ✓", "ünïcödé ✓"),
        ]
        for (line, text) in cases {
            XCTAssertEqual(try client.command(line), .ok("1"), line)
            let message = try client.nextMessage()
            XCTAssertEqual(message.text, text, "text of '\(line)'")
            XCTAssertEqual(message.payload.count, Array(text.utf8).count, "nbytes of '\(line)'")
        }
    }

    func testPubAndSendToMissingNumberAreNotFoundAndPayloadIsSkipped() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        assertError(try client.command("SEND NOWHERE hi"), "NOTFOUND", "SEND to a number never created")
        // The payload of a refused PUB is still consumed as a payload: "PING" inside it is not a command.
        try client.send("PUB NOWHERE 5\nPING\n\n")
        assertError(try client.readReply(), "NOTFOUND", "PUB to a number never created")
        XCTAssertEqual(try client.command("PING after"), .status("PONG after"), "the 5 payload bytes were skipped")
    }

    func testMsgCarriesFromAfterHelloName() throws {
        let daemon = try startDaemon()
        let subscriber = try connect(daemon, "subscriber")
        let named = try connect(daemon, "named")
        let anonymous = try connect(daemon, "anonymous")
        try create(subscriber, "NAMED")
        try subscribe(subscriber, "NAMED")
        XCTAssertEqual(try named.command("HELLO name=alice").errorCode, nil)
        XCTAssertEqual(try named.command("SEND NAMED hi"), .ok("1"))
        let fromAlice = try subscriber.nextMessage()
        XCTAssertEqual(fromAlice.attributes, ["from": "alice"], "MSG NAMED 2 from=alice")
        XCTAssertEqual(fromAlice.text, "hi")
        XCTAssertEqual(try named.pub("NAMED", [1, 2, 3]), .ok("1"))
        XCTAssertEqual(try subscriber.nextMessage(), Message("NAMED", [1, 2, 3], from: "alice"))
        XCTAssertEqual(try anonymous.command("SEND NAMED anon"), .ok("1"))
        XCTAssertEqual(try subscriber.nextMessage().attributes, [:], "no from= without HELLO name=")
        XCTAssertEqual(try anonymous.command("HELLO").errorCode, nil)
        XCTAssertEqual(try anonymous.command("SEND NAMED still anon"), .ok("1"))
        XCTAssertEqual(try subscriber.nextMessage().attributes, [:], "no from= after HELLO without name=")
    }

    func testPublisherThatIsSubscribedGetsItsOwnMessage() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        try create(client, "SELF")
        try subscribe(client, "SELF")
        XCTAssertEqual(try client.command("SEND SELF echo"), .ok("1"))
        XCTAssertEqual(try client.nextMessage().text, "echo")
        XCTAssertEqual(try client.pub("SELF", Array("echo2".utf8)), .ok("1"))
        XCTAssertEqual(try client.nextMessage().text, "echo2")
    }

    func testOverlappingSubscriptionsDeliverOncePerSession() throws {
        let daemon = try startDaemon()
        let subscriber = try connect(daemon, "subscriber")
        let other = try connect(daemon, "other")
        let publisher = try connect(daemon, "publisher")
        try create(publisher, "A.b.c")
        try subscribe(subscriber, "A.b.c", "A.*.c", "A.b.*", "A.>", "*.b.>", ">")
        try subscribe(other, ">", "A.b.c")
        XCTAssertEqual(try publisher.command("SEND A.b.c once"), .ok("2"), "two sessions, however many SUBs")
        XCTAssertEqual(try subscriber.nextMessage().text, "once")
        XCTAssertEqual(try subscriber.pushesBeforePing(), [], "a second delivery to the same session")
        XCTAssertEqual(try other.nextMessage().text, "once")
        XCTAssertEqual(try other.pushesBeforePing(), [], "a second delivery to the same session")
        XCTAssertEqual(try listCounts(publisher), ["A.b.c": 2], "LIST counts sessions, not subscriptions")
    }

    func testEmptyPayloadIsDelivered() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        try create(client, "EMPTY")
        try subscribe(client, "EMPTY")
        try client.send("PUB EMPTY 0\n\n")
        XCTAssertEqual(try client.readReply(), .ok("1"))
        XCTAssertEqual(try client.nextMessage(), Message("EMPTY", []))
    }
}
