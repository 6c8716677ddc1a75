import XCTest

/// A session that ends, for any reason, is no longer subscribed: no later `+OK <receivers>` counts it.
final class SessionEndTests: IntegrationTestCase {
    func testClosedSubscriberIsNoLongerCounted() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N", "M.x"]))
        let subscriber = try connect(daemon, "subscriber")
        let publisher = try connect(daemon, "publisher")
        try subscribe(subscriber, "N", "M.*", ">")
        XCTAssertEqual(try publisher.command("SEND N before"), .ok("1"))
        subscriber.close()
        // The server learns of the close asynchronously: wait until LIST no longer counts the session.
        try eventually("LIST shows N with 0 subscribers") { try listCounts(publisher)["N"] == 0 }
        XCTAssertEqual(try publisher.command("SEND N after"), .ok("0"))
        XCTAssertEqual(try publisher.command("SEND M.x after"), .ok("0"), "its wildcard subscriptions are gone too")
        let values = try stats(publisher)
        XCTAssertEqual(values["connections"], "1")
        XCTAssertEqual(values["subscriptions"], "0")
    }

    func testClosedSubscriberWithUnreadMessagesIsNoLongerCounted() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let subscriber = try connect(daemon, "subscriber")
        let publisher = try connect(daemon, "publisher")
        try subscribe(subscriber, "N")
        for index in 0..<100 { XCTAssertEqual(try publisher.command("SEND N unread \(index)"), .ok("1")) }
        subscriber.close()
        try eventually("LIST shows N with 0 subscribers") { try listCounts(publisher)["N"] == 0 }
        XCTAssertEqual(try publisher.command("SEND N after"), .ok("0"))
    }

    func testSubscriberThatQuitIsNotCountedByTheNextPub() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let subscriber = try connect(daemon, "subscriber")
        let publisher = try connect(daemon, "publisher")
        try subscribe(subscriber, "N", ">")
        XCTAssertEqual(try subscriber.command("QUIT"), .ok("bye"))
        try subscriber.expectClosed()
        // The server itself ended this session before closing it: no polling needed.
        XCTAssertEqual(try publisher.command("SEND N after quit"), .ok("0"))
        XCTAssertEqual(try listCounts(publisher), ["N": 0])
    }

    func testSubscriberClosedForTooBigIsNotCountedByTheNextPub() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"], maxLine: 1024))
        let subscriber = try connect(daemon, "subscriber")
        let publisher = try connect(daemon, "publisher")
        try subscribe(subscriber, "N")
        try subscriber.sendLine("PING " + String(repeating: "x", count: 2048))
        assertError(try subscriber.readReply(), "TOOBIG")
        try subscriber.expectClosed()
        XCTAssertEqual(try publisher.command("SEND N after"), .ok("0"))
    }
}
