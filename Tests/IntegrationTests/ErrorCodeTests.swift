import XCTest

/// PROTO, UNKNOWN and NAME errors: the right code, the connection staying open (or closing after a bad payload
/// frame), and other clients unaffected.
final class ErrorCodeTests: IntegrationTestCase {
    func testMalformedCommandsAreProtoAndKeepConnectionOpen() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let client = try connect(daemon)
        let malformed = [
            "CREATE", "CREATE N extra", "REMOVE", "REMOVE N extra", "SUB", "SUB N extra", "UNSUB", "UNSUB N extra",
            "PUB", "PUB N", "PUB N abc", "PUB N -1", "PUB N 1.5", "PUB N 0x10", "SEND",
            "LIST N extra", "STATS extra",
        ]
        for line in malformed {
            assertError(try client.command(line), "PROTO", "'\(line)'")
        }
        assertOpen(client, "after \(malformed.count) PROTO errors")
        XCTAssertEqual(try listCounts(client), ["N": 0], "no malformed command changed anything")
    }

    func testUnknownVerbIsUnknownAndKeepsConnectionOpen() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        for line in ["FROBNICATE", "PUBLISH N 3", "SUBSCRIBE >", "HELLOO", "P", "MSG N 1", "+OK"] {
            assertError(try client.command(line), "UNKNOWN", "'\(line)'")
        }
        assertOpen(client)
    }

    func testInvalidNumbersAndPatternsAreNameErrors() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let client = try connect(daemon)
        let longest = String(repeating: "x", count: 200)
        let tooLong = String(repeating: "y", count: 201)
        let invalidText: [String] = [
            "CREATE a..b", "CREATE .a", "CREATE a.", "CREATE .", "CREATE *", "CREATE >", "CREATE a.*", "CREATE a.>",
            "CREATE *.a", "CREATE \(tooLong)", "CREATE a\tb", "SUB a..b", "SUB a.>.b", "SUB >.a", "SUB .>",
            "SUB \(tooLong)", "SEND a..b text", "SEND N.* text", "SEND > text", "REMOVE a..b", "REMOVE *",
            "LIST a..b", "LIST >.x",
        ]
        let invalidBytes: [[UInt8]] = [
            Array("CREATE bad".utf8) + [0x01] + Array("name".utf8),
            Array("CREATE del".utf8) + [0x7F],
            Array("CREATE ".utf8) + [0xFF, 0xFE],
            Array("CREATE ".utf8) + [0xC3],
        ]
        let invalid = invalidText.map { Array($0.utf8) } + invalidBytes
        for line in invalid {
            try client.send(line + [0x0A])
            assertError(try client.readReply(), "NAME", "'\(describeBytes(line))'")
        }
        assertOpen(client, "after NAME errors")
        XCTAssertEqual(try listCounts(client), ["N": 0], "nothing was created")
        XCTAssertEqual(try client.command("CREATE \(longest)"), .ok("created"), "200 bytes is allowed")
        XCTAssertEqual(try client.command("CREATE ünï.cödé"), .ok("created"), "UTF-8 is allowed")
    }

    func testRefusedPubHeaderStillConsumesItsPayload() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let client = try connect(daemon)
        try client.send("PUB N.* 4\nPING\n")
        assertError(try client.readReply(), "NAME", "PUB to a pattern")
        XCTAssertEqual(try client.command("PING next"), .status("PONG next"), "the 4 payload bytes 'PING' were skipped")
    }

    func testBadPayloadFrameIsProtoAndClosesConnection() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let subscriber = try connect(daemon, "subscriber")
        try subscribe(subscriber, "N")
        let client = try connect(daemon)
        try client.send("PUB N 3\nabcX\n")
        assertError(try client.readReply(), "PROTO", "payload not followed by LF")
        try client.expectClosed()
        XCTAssertEqual(try subscriber.pushesBeforePing(), [], "the bad frame delivered nothing")
    }

    func testErrorsLeaveOtherClientsUnaffected() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"], maxLine: 1024))
        let subscriber = try connect(daemon, "subscriber")
        let publisher = try connect(daemon, "publisher")
        try subscribe(subscriber, "N")
        let offender = try connect(daemon, "offender")
        assertError(try offender.command("PUB N abc"), "PROTO")
        assertError(try offender.command("BOGUS"), "UNKNOWN")
        assertError(try offender.command("SUB a..b"), "NAME")
        assertError(try offender.command("SUB MISSING"), "NOTFOUND")
        XCTAssertEqual(try publisher.command("SEND N first"), .ok("1"))
        XCTAssertEqual(try subscriber.nextMessage().text, "first")
        try offender.sendLine("SEND N " + String(repeating: "z", count: 4096))
        assertError(try offender.readReply(), "TOOBIG")
        try offender.expectClosed()
        XCTAssertEqual(try publisher.command("SEND N second"), .ok("1"))
        XCTAssertEqual(try subscriber.nextMessage().text, "second")
        XCTAssertEqual(try subscriber.pushesBeforePing(), [], "the oversized SEND delivered nothing")
    }
}
