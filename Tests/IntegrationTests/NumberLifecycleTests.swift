import XCTest

/// CREATE and REMOVE, and GONE to the exact subscribers of a removed number.
final class NumberLifecycleTests: IntegrationTestCase {
    func testCreateRepliesCreatedThenExists() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        XCTAssertEqual(try client.command("CREATE SCIENCE"), .ok("created"))
        XCTAssertEqual(try client.command("CREATE SCIENCE"), .ok("exists"))
        XCTAssertEqual(try connect(daemon, "other").command("CREATE SCIENCE"), .ok("exists"))
        XCTAssertEqual(try client.command("CREATE SCIENCE.physics"), .ok("created"))
    }

    func testNumbersAreCaseSensitive() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        XCTAssertEqual(try client.command("CREATE science"), .ok("created"))
        XCTAssertEqual(try client.command("CREATE Science"), .ok("created"))
        XCTAssertEqual(try listCounts(client), ["science": 0, "Science": 0])
    }

    func testNumbersFromConfigExistAtStart() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["NEWS", "NEWS.sport"]))
        let client = try connect(daemon)
        XCTAssertEqual(try listCounts(client), ["NEWS": 0, "NEWS.sport": 0])
        XCTAssertEqual(try client.command("CREATE NEWS"), .ok("exists"))
        XCTAssertEqual(try client.command("SUB NEWS.sport"), .ok())
    }

    func testRemoveMissingNumberIsNotFoundAndKeepsConnection() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        assertError(try client.command("REMOVE NOWHERE"), "NOTFOUND", "REMOVE of a number never created")
        try create(client, "ONCE")
        XCTAssertEqual(try client.command("REMOVE ONCE"), .ok("removed 0"))
        assertError(try client.command("REMOVE ONCE"), "NOTFOUND", "REMOVE twice")
        assertOpen(client)
    }

    func testRemoveTellsExactSubscribersGoneAndCountsThem() throws {
        let daemon = try startDaemon()
        let owner = try connect(daemon, "owner")
        let first = try connect(daemon, "exact 1")
        let second = try connect(daemon, "exact 2")
        let both = try connect(daemon, "exact and wildcard")
        let wildcard = try connect(daemon, "wildcard only")
        try create(owner, "TOPIC", "OTHER")
        try subscribe(first, "TOPIC")
        try subscribe(second, "TOPIC", "OTHER")
        try subscribe(both, "TOPIC", "*")
        try subscribe(wildcard, ">")

        XCTAssertEqual(try owner.command("REMOVE TOPIC"), .ok("removed 3"), "three sessions had an exact SUB TOPIC")
        XCTAssertEqual(try first.nextPush(), .gone("TOPIC"))
        XCTAssertEqual(try second.nextPush(), .gone("TOPIC"))
        XCTAssertEqual(try both.nextPush(), .gone("TOPIC"))
        XCTAssertEqual(try owner.pushesBeforePing(), [], "the remover was not subscribed")
        XCTAssertEqual(try wildcard.pushesBeforePing(), [], "a wildcard subscriber is not told GONE")

        // A publish to the re-created number reaches the wildcard subscriptions only.
        try create(owner, "TOPIC")
        XCTAssertEqual(try owner.command("SEND TOPIC again"), .ok("2"), "'*' and '>' still match TOPIC")
        XCTAssertEqual(try wildcard.nextMessage().text, "again")
        XCTAssertEqual(try both.nextMessage().text, "again")
        XCTAssertEqual(try first.pushesBeforePing(), [], "the exact SUB TOPIC ended with GONE")
        // The other exact subscription of 'second' is untouched.
        XCTAssertEqual(try owner.command("SEND OTHER still"), .ok("3"))
        XCTAssertEqual(try second.nextMessage().text, "still")
    }

    func testRemovedNumberIsGoneFromListAndRefusesPub() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        try create(client, "A", "B")
        XCTAssertEqual(try client.command("REMOVE A"), .ok("removed 0"))
        XCTAssertEqual(try listCounts(client), ["B": 0])
        assertError(try client.command("SEND A x"), "NOTFOUND", "SEND to a removed number")
        assertError(try client.command("SUB A"), "NOTFOUND", "SUB to a removed number")
    }
}
