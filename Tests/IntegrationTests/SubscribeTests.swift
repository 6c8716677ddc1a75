import XCTest

/// SUB, UNSUB and the `from=` filter.
final class SubscribeTests: IntegrationTestCase {
    func testSubToMissingNumberIsNotFoundAndKeepsConnection() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        assertError(try client.command("SUB MISSING"), "NOTFOUND", "SUB to a number never created")
        assertError(try client.command("SUB MISSING.deeper"), "NOTFOUND", "SUB to a dotted number never created")
        assertOpen(client)
    }

    func testSubWithWildcardNeedsNoNumber() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        XCTAssertEqual(try client.command("SUB LATER.*"), .ok())
        XCTAssertEqual(try client.command("SUB LATER.>"), .ok())
        XCTAssertEqual(try client.command("SUB *.x"), .ok())
        XCTAssertEqual(try client.command("SUB >"), .ok())
        // The number created afterwards is matched by them.
        let publisher = try connect(daemon, "publisher")
        try create(publisher, "LATER.x")
        XCTAssertEqual(try publisher.command("SEND LATER.x late"), .ok("1"))
        XCTAssertEqual(try client.nextMessage().text, "late")
    }

    func testUnsubAlwaysRepliesOK() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        try create(client, "EXISTS")
        XCTAssertEqual(try client.command("UNSUB EXISTS"), .ok(), "UNSUB without SUB")
        XCTAssertEqual(try client.command("UNSUB NEVER.CREATED"), .ok(), "UNSUB of a missing number")
        XCTAssertEqual(try client.command("UNSUB A.*"), .ok(), "UNSUB of a wildcard never subscribed")
        try subscribe(client, "EXISTS")
        XCTAssertEqual(try client.command("UNSUB EXISTS"), .ok())
        XCTAssertEqual(try client.command("UNSUB EXISTS"), .ok(), "UNSUB twice")
    }

    func testUnsubStopsDelivery() throws {
        let daemon = try startDaemon()
        let subscriber = try connect(daemon, "subscriber")
        let publisher = try connect(daemon, "publisher")
        try create(publisher, "NEWS")
        try subscribe(subscriber, "NEWS")
        XCTAssertEqual(try publisher.command("SEND NEWS one"), .ok("1"))
        XCTAssertEqual(try subscriber.nextMessage().text, "one")
        XCTAssertEqual(try subscriber.command("UNSUB NEWS"), .ok())
        XCTAssertEqual(try publisher.command("SEND NEWS two"), .ok("0"))
        try subscribe(subscriber, ">")
        XCTAssertEqual(try subscriber.command("UNSUB >"), .ok())
        XCTAssertEqual(try publisher.command("SEND NEWS three"), .ok("0"), "UNSUB > ends the '>' subscription")
        XCTAssertEqual(try subscriber.pushesBeforePing(), [])
        XCTAssertEqual(try listCounts(publisher), ["NEWS": 0])
    }

    func testSubFromFilterDeliversOnlyThatPublishersMessages() throws {
        let daemon = try startDaemon()
        let subscriber = try connect(daemon, "subscriber")
        let alice = try connect(daemon, "alice")
        let bob = try connect(daemon, "bob")
        let anonymous = try connect(daemon, "anonymous")
        XCTAssertEqual(try alice.command("HELLO name=alice").errorCode, nil)
        XCTAssertEqual(try bob.command("HELLO name=bob").errorCode, nil)
        try create(alice, "FEED")
        XCTAssertEqual(try subscriber.command("SUB FEED from=alice"), .ok())
        XCTAssertEqual(try bob.command("SEND FEED from bob"), .ok("0"))
        XCTAssertEqual(try anonymous.command("SEND FEED from nobody"), .ok("0"))
        XCTAssertEqual(try alice.command("SEND FEED from alice"), .ok("1"))
        let message = try subscriber.nextMessage()
        XCTAssertEqual(message.text, "from alice")
        XCTAssertEqual(message.from, "alice")
        XCTAssertEqual(try subscriber.pushesBeforePing(), [])
    }

    func testSubFromFilterWorksWithWildcards() throws {
        let daemon = try startDaemon()
        let subscriber = try connect(daemon, "subscriber")
        let alice = try connect(daemon, "alice")
        let bob = try connect(daemon, "bob")
        _ = try alice.command("HELLO name=alice")
        _ = try bob.command("HELLO name=bob")
        try create(alice, "FEED.a")
        XCTAssertEqual(try subscriber.command("SUB FEED.* from=bob"), .ok())
        XCTAssertEqual(try alice.command("SEND FEED.a a"), .ok("0"))
        XCTAssertEqual(try bob.command("SEND FEED.a b"), .ok("1"))
        XCTAssertEqual(try subscriber.nextMessage().text, "b")
    }
}
