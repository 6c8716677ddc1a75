import XCTest

/// Protocol 1.1 retained numbers over real sockets: `CREATE <n> retain`, `rev=` on every `MSG`, the current value
/// pushed on `SUB` before its `+OK` (wildcards in byte order, `from=` applied), `GET`, and `LIST ... kind`.
final class RetainedNumberTests: IntegrationTestCase {
    /// The raw lines `client` reads next: pushes and replies in the order they came.
    private func rawLines(_ client: LineClient, _ count: Int) throws -> [String] {
        try (0..<count).map { _ in String(decoding: try client.readLine(), as: UTF8.self) }
    }

    func testEveryMessageOfARetainedNumberCarriesTheNextRevision() throws {
        let daemon = try startDaemon()
        let publisher = try connect(daemon, "publisher")
        let subscriber = try connect(daemon, "subscriber")
        XCTAssertEqual(try publisher.command("CREATE R retain"), .ok("created"))
        XCTAssertEqual(try publisher.command("CREATE P"), .ok("created"))
        XCTAssertEqual(try publisher.command("CREATE R"), .ok("exists"), "an existing number keeps its kind")
        XCTAssertEqual(try publisher.command("HELLO name=lab").errorCode, nil)
        try subscribe(subscriber, "R", "P")
        XCTAssertEqual(try publisher.command("SEND R first"), .ok("1"))
        try publisher.send("PUB R 6 unit=EUR\nsecond\n")
        XCTAssertEqual(try publisher.readReply(), .ok("1"))
        XCTAssertEqual(try publisher.command("SEND P plain"), .ok("1"))
        XCTAssertEqual(
            try rawLines(subscriber, 6),
            [
                "MSG R 5 from=lab rev=1", "first", "MSG R 6 from=lab rev=2 unit=EUR", "second", "MSG P 5 from=lab",
                "plain",
            ],
            "rev= after from= and before the info pairs; none on a plain number")
    }

    func testANewSubscriptionGetsTheCurrentValuesFirstInByteOrderWithItsFromFilter() throws {
        let daemon = try startDaemon()
        let alice = try connect(daemon, "alice")
        let bob = try connect(daemon, "bob")
        for number in ["A.b", "A.a", "A.c"] {
            XCTAssertEqual(try alice.command("CREATE \(number) retain"), .ok("created"))
        }
        XCTAssertEqual(try alice.command("CREATE A.plain"), .ok("created"))
        XCTAssertEqual(try alice.command("HELLO name=alice").errorCode, nil)
        XCTAssertEqual(try bob.command("HELLO name=bob").errorCode, nil)
        XCTAssertEqual(try alice.command("SEND A.b from-alice"), .ok("0"), "kept, though nobody received it")
        XCTAssertEqual(try bob.command("SEND A.a from-bob"), .ok("0"))
        XCTAssertEqual(try alice.command("SEND A.plain gone"), .ok("0"))
        // A.c has no value yet: nothing is pushed for it.

        let newcomer = try connect(daemon, "newcomer")
        try newcomer.send("SUB A.*\n")
        XCTAssertEqual(
            try rawLines(newcomer, 5),
            ["MSG A.a 8 from=bob rev=1", "from-bob", "MSG A.b 10 from=alice rev=1", "from-alice", "+OK"])
        try newcomer.send("SUB A.> from=alice\n")
        XCTAssertEqual(try rawLines(newcomer, 3), ["MSG A.b 10 from=alice rev=1", "from-alice", "+OK"])
    }

    func testGetAnswersTheCurrentValueThenItsRevision() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        XCTAssertEqual(try client.command("CREATE R retain"), .ok("created"))
        XCTAssertEqual(try client.command("CREATE P"), .ok("created"))
        XCTAssertEqual(try client.command("GET R"), .ok("0"), "nothing published yet")
        XCTAssertEqual(client.takePushes(), [])
        XCTAssertEqual(try client.command("SEND R v1"), .ok("0"))
        XCTAssertEqual(try client.command("SEND R v2"), .ok("0"))
        try client.send("GET R\n")
        XCTAssertEqual(try rawLines(client, 3), ["MSG R 2 rev=2", "v2", "+OK 2"])
        assertError(try client.command("GET P"), "PROTO", "a plain number has no current value")
        assertError(try client.command("GET NOPE"), "NOTFOUND")
        assertError(try client.command("GET R.*"), "NAME")
    }

    func testListShowsKindsOnlyWhenAskedSoA10ClientSeesTwoWords() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        XCTAssertEqual(try client.command("CREATE R retain"), .ok("created"))
        XCTAssertEqual(try client.command("CREATE P"), .ok("created"))
        XCTAssertEqual(try client.command("SEND R v"), .ok("0"))
        XCTAssertEqual(try client.command("LIST"), .list(["P 0", "R 0"]))
        XCTAssertEqual(try client.command("LIST > kind"), .list(["P 0 plain", "R 0 retained 1"]))
        XCTAssertEqual(try client.command("LIST R kind"), .list(["R 0 retained 1"]))
    }

    func testARemovedRetainedNumberForgetsItsValue() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        XCTAssertEqual(try client.command("CREATE R retain"), .ok("created"))
        XCTAssertEqual(try client.command("SEND R old"), .ok("0"))
        XCTAssertEqual(try client.command("REMOVE R"), .ok("removed 0"))
        XCTAssertEqual(try client.command("CREATE R retain"), .ok("created"))
        XCTAssertEqual(try client.command("GET R"), .ok("0"))
        XCTAssertEqual(try client.command("SEND R new"), .ok("0"))
        try client.send("GET R\n")
        XCTAssertEqual(try rawLines(client, 3), ["MSG R 3 rev=1", "new", "+OK 1"], "revisions start over")
    }

    /// A SUB whose current values would not fit under max_pending is refused with LIMIT (nothing subscribed, the
    /// session stays), instead of cutting its own session off as a slow consumer.
    func testASubWhoseValuesExceedMaxPendingIsRefusedNotCutOff() throws {
        let daemon = try startDaemon(DaemonConfig(maxPayload: 60_000, maxPending: 100_000))
        let publisher = try connect(daemon, "publisher")
        let big = [UInt8](repeating: UInt8(ascii: "b"), count: 50_000)
        for name in ["V.a", "V.b", "V.c"] {
            XCTAssertEqual(try publisher.command("CREATE \(name) retain"), .ok("created"))
            XCTAssertEqual(try publisher.pub(name, big), .ok("0"))
        }
        let reader = try connect(daemon, "reader")
        assertError(try reader.command("SUB V.*"), "LIMIT", "150 KB of values under a 100 KB max_pending")
        XCTAssertEqual(try reader.pushesBeforePing(), [], "nothing pushed, nothing subscribed")
        XCTAssertEqual(
            try publisher.command("LIST V.* kind"),
            .list(["V.a 0 retained 1", "V.b 0 retained 1", "V.c 0 retained 1"]))
        XCTAssertEqual(try reader.command("SUB V.a"), .ok(), "one value fits")
        XCTAssertEqual(try reader.nextMessage().payload, big)
    }
}
