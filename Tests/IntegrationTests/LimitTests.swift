import XCTest

/// LIMIT (max_connections, max_subscriptions, max_numbers) and TOOBIG for lines (max_line).
final class LimitTests: IntegrationTestCase {
    func testConnectionOverMaxConnectionsGetsLimitAndIsClosed() throws {
        let daemon = try startDaemon(DaemonConfig(maxConnections: 2))
        let first = try connect(daemon, "first")
        let second = try connect(daemon, "second")
        assertOpen(first)
        assertOpen(second)
        let third = try connect(daemon, "third")
        assertError(try third.readReply(), "LIMIT", "third connection with max_connections 2")
        try third.expectClosed()
        assertOpen(first, "first after the refused connection")
        assertOpen(second, "second after the refused connection")
        XCTAssertEqual(try stats(first)["connections"], "2", "the refused connection is not counted")

        // Once a connection ends, a new one is accepted again (the server learns of the close asynchronously).
        second.close()
        try eventually("a new connection is accepted after one closed") {
            let fresh = try connect(daemon, "fresh")
            let reply = try fresh.command("PING")
            if reply == .status("PONG") { return true }
            XCTAssertEqual(reply.errorCode, "LIMIT", "while the old one is still counted")
            return false
        }
    }

    func testSubOverMaxSubscriptionsGetsLimitAndKeepsConnection() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["A", "B", "C"], maxSubscriptions: 2))
        let client = try connect(daemon)
        try subscribe(client, "A", "X.*")
        assertError(try client.command("SUB B"), "LIMIT", "third SUB with max_subscriptions 2")
        assertError(try client.command("SUB >"), "LIMIT", "third SUB (wildcard) with max_subscriptions 2")
        assertOpen(client, "after LIMIT")
        XCTAssertEqual(try client.command("UNSUB A"), .ok())
        XCTAssertEqual(try client.command("SUB B"), .ok(), "room again after UNSUB")
        let other = try connect(daemon, "other")
        try subscribe(other, "A", "C")
        let publisher = try connect(daemon, "publisher")
        XCTAssertEqual(try publisher.command("SEND B b"), .ok("1"))
        XCTAssertEqual(try publisher.command("SEND C c"), .ok("1"), "the refused SUB C of the first session")
        XCTAssertEqual(try publisher.command("SEND A a"), .ok("1"), "only the other session is subscribed to A")
    }

    func testCreateOverMaxNumbersGetsLimitAndKeepsConnection() throws {
        let daemon = try startDaemon(DaemonConfig(maxNumbers: 3))
        let client = try connect(daemon)
        try create(client, "ONE", "TWO", "THREE")
        assertError(try client.command("CREATE FOUR"), "LIMIT", "fourth CREATE with max_numbers 3")
        XCTAssertEqual(try client.command("CREATE ONE"), .ok("exists"), "an existing number is not over the limit")
        assertOpen(client, "after LIMIT")
        XCTAssertEqual(try client.command("REMOVE ONE"), .ok("removed 0"))
        XCTAssertEqual(try client.command("CREATE FOUR"), .ok("created"), "room again after REMOVE")
    }

    func testLineUnderMaxLineIsAccepted() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"], maxLine: 1024))
        let client = try connect(daemon)
        try subscribe(client, "N")
        let text = String(repeating: "a", count: 1000)
        XCTAssertEqual(try client.command("SEND N \(text)"), .ok("1"))
        XCTAssertEqual(try client.nextMessage().text, text)
    }

    func testLineOfExactlyMaxLineBytesIsAcceptedAndOneMoreIsTooBig() throws {
        let daemon = try startDaemon(DaemonConfig(maxLine: 1024))
        let client = try connect(daemon)
        let longest = "PING " + String(repeating: "x", count: 1024 - 5)
        XCTAssertEqual(try client.command(longest), .status("PONG " + longest.dropFirst(5)), "1024 bytes + LF")
        try client.send(longest + "\r\n")
        XCTAssertEqual(try client.readReply(), .status("PONG " + longest.dropFirst(5)), "1024 bytes + CR LF")
        try client.sendLine(longest + "y")
        assertError(try client.readReply(), "TOOBIG", "1025 bytes with max_line 1024")
        try client.expectClosed()
    }

    func testLineOverMaxLineIsTooBigAndClosesConnection() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"], maxLine: 1024))
        let subscriber = try connect(daemon, "subscriber")
        try subscribe(subscriber, "N")
        let client = try connect(daemon)
        try client.sendLine("SEND N " + String(repeating: "b", count: 2000))
        assertError(try client.readReply(), "TOOBIG", "a 2007-byte line with max_line 1024")
        try client.expectClosed()
        XCTAssertEqual(try subscriber.pushesBeforePing(), [], "the oversized line delivered nothing")
    }

    func testLineOverMaxLineIsRefusedBeforeItsLFArrives() throws {
        let daemon = try startDaemon(DaemonConfig(maxLine: 1024))
        let client = try connect(daemon)
        // No LF at all: the server must not buffer an endless line.
        try client.send("PING " + String(repeating: "c", count: 4096))
        assertError(try client.readReply(), "TOOBIG", "4101 bytes without LF with max_line 1024")
        try client.expectClosed()
    }
}
