import XCTest

/// Protocol 1.1 info pairs over real sockets: `PUB <number> <nbytes> <key>=<value>...` reaches every `MSG` of the
/// publication, after the server's own keys, in the order given; a bad pair is `-ERR PROTO` with the payload read
/// first, so the connection stays in step.
final class InfoPairTests: IntegrationTestCase {
    func testPairsReachEverySubscriberAfterFromInTheOrderGiven() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["SCIENCE"]))
        let exact = try connect(daemon, "exact")
        let wildcard = try connect(daemon, "wildcard")
        let publisher = try connect(daemon, "publisher")
        try subscribe(exact, "SCIENCE")
        try subscribe(wildcard, ">")
        XCTAssertEqual(try publisher.command("HELLO name=lab").errorCode, nil)
        try publisher.send("PUB SCIENCE 4 unit=EUR price=12  note=a%20b\nV1.0\n")
        XCTAssertEqual(try publisher.readReply(), .ok("2"))
        for subscriber in [exact, wildcard] {
            XCTAssertEqual(
                String(decoding: try subscriber.readLine(), as: UTF8.self),
                "MSG SCIENCE 4 from=lab unit=EUR price=12 note=a%20b", "the server's own key first, then the pairs")
            XCTAssertEqual(try subscriber.readBytes(5), Array("V1.0\n".utf8))
        }
    }

    func testBadPairsAreProtoAfterThePayloadAndChangeNothing() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let subscriber = try connect(daemon, "subscriber")
        let publisher = try connect(daemon, "publisher")
        try subscribe(subscriber, "N")
        let bad = [
            "extra", "from=me", "rev=7", "group=g", "$sys=1", "9lives=1", "k=a=b", "k=1 k=2",
            (0..<17).map { "k\($0)=v" }.joined(separator: " "),
        ]
        for pairs in bad {
            // The 12-byte payload looks like a command: read as a command, it would answer PONG.
            try publisher.send("PUB N 12 \(pairs)\nPING inside\n\n")
            assertError(try publisher.readReply(), "PROTO", pairs)
        }
        assertOpen(publisher, "after \(bad.count) bad headers")
        XCTAssertEqual(try publisher.command("SEND N after"), .ok("1"))
        XCTAssertEqual(try subscriber.nextMessage(), Message("N", text: "after"), "no bad PUB was delivered")
        XCTAssertEqual(try stats(publisher)["messages_published"], "1")
    }

    /// Regression: a size of 11 or more digits was `-ERR PROTO` and the bytes after the line were read as commands,
    /// although the contract makes a size over `max_payload` `TOOBIG`, closing.
    func testASizeOverMaxPayloadIsTooBigAndClosesHoweverManyDigitsItHas() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"], maxPayload: 1000))
        for size in ["1001", "12345678901", String(repeating: "9", count: 40)] {
            let client = try connect(daemon, "size \(size.count) digits")
            try client.send("PUB N \(size)\nPING inside\n")
            assertError(try client.readReply(), "TOOBIG", size)
            try client.expectClosed(discardingData: true)
            client.close()
        }
        let other = try connect(daemon, "other")
        // Counted once the client closed its side too (subd waits for that after its -ERR).
        try eventually("three protocol-error closes") { try stats(other)["closed_protocol_error"] == "3" }
    }

    func testHelloAnnouncesProtocolOneDotOne() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        guard case .status(let text) = try client.command("HELLO") else { return XCTFail("HELLO failed") }
        XCTAssertTrue(text.contains(" proto=1.1 "), text)
    }
}
