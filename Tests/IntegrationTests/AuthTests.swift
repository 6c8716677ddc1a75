import XCTest

/// `auth_token`: until `HELLO token=<secret>` succeeds, every command but HELLO, PING and QUIT gets `-ERR AUTH`.
final class AuthTests: IntegrationTestCase {
    private let config = DaemonConfig(numbers: ["N"], extraLines: ["auth_token: \"s3cret\""])

    /// With the default `auth_failure_delay` (0.5 s), the first failed HELLO is answered no sooner than that.
    func testCommandsNeedTheTokenFirst() throws {
        let daemon = try startDaemon(config)
        let client = try connect(daemon)
        assertError(try client.command("SUB N"), "AUTH", "SUB before HELLO")
        XCTAssertEqual(try client.command("PING"), .status("PONG"), "PING needs no token")
        let start = Date()
        assertError(try client.command("HELLO token=wrong"), "AUTH", "wrong token")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.45, "the default delay is 0.5 s")
        assertError(try client.command("HELLO name=al"), "AUTH", "no token")
        guard case .status(let text) = try client.command("HELLO token=s3cret name=al"), text.hasPrefix("OK subd ")
        else { return XCTFail("right token refused") }
        XCTAssertEqual(try client.command("SUB N"), .ok())
    }

    /// Before authentication a malformed command is `AUTH` too (the contract: every command but HELLO, PING and QUIT),
    /// whatever else is wrong with it: a bad name, a bad argument, an unknown verb, a PUB's bad number or info pair
    /// (its payload is read, so the next command is in step). A malformed HELLO is still `PROTO`, and once
    /// authenticated the same lines get their own errors.
    func testMalformedCommandsBeforeAuthenticationAreAuth() throws {
        let daemon = try startDaemon(config)
        let client = try connect(daemon)
        let malformed = ["SUB a..b", "SUB N bogus", "LIST a..b", "FROB N", "CREATE", "UNSUB"]
        for line in malformed { assertError(try client.command(line), "AUTH", "\(line) before HELLO") }
        try client.send("PUB a..b 2\nhi\nPUB N 2 bad\nhi\nPING\n")
        assertError(try client.readReply(), "AUTH", "PUB to a bad number before HELLO")
        assertError(try client.readReply(), "AUTH", "PUB with a bad info pair before HELLO")
        XCTAssertEqual(try client.readReply(), .status("PONG"), "in step after both payloads")
        assertError(try client.command("HELLO bogus"), "PROTO", "a malformed HELLO")
        guard case .status = try client.command("HELLO token=s3cret") else { return XCTFail("right token refused") }
        assertError(try client.command("SUB a..b"), "NAME", "after HELLO")
        assertError(try client.command("FROB N"), "UNKNOWN", "after HELLO")
    }

    /// Regression: with auth_token set, HELLO without a token was refused even after authenticating, so a client
    /// could not change its name.
    func testAuthenticatedClientMayRenameItself() throws {
        let daemon = try startDaemon(config)
        let subscriber = try connect(daemon, "subscriber")
        let publisher = try connect(daemon, "publisher")
        for client in [subscriber, publisher] {
            guard case .status = try client.command("HELLO token=s3cret name=al") else { return XCTFail("HELLO") }
        }
        XCTAssertEqual(try subscriber.command("SUB N"), .ok())
        guard case .status = try publisher.command("HELLO name=bob") else { return XCTFail("rename refused") }
        XCTAssertEqual(try publisher.command("SEND N hi"), .ok("1"))
        XCTAssertEqual(try subscriber.nextMessage().attributes["from"], "bob")
        assertError(try publisher.command("HELLO token=wrong"), "AUTH", "a wrong token is still refused")
    }

    func testSubctlSendsTheToken() throws {
        let daemon = try startDaemon(config)
        let refused = try Subctl.run(["publish", "N", "x", "--server", daemon.server])
        XCTAssertEqual(refused.status, 1, "\(refused)")
        XCTAssertTrue(refused.stderr.contains("AUTH"), "\(refused)")
        let flag = try Subctl.run(["publish", "N", "x", "--server", daemon.server, "--token", "s3cret"])
        XCTAssertEqual(flag.lines, ["published to 0 receivers"], "\(flag)")
        let environment = try Subctl.run(
            ["publish", "N", "x", "--server", daemon.server],
            environment: ["SUBD_TOKEN": "s3cret"])
        XCTAssertEqual(environment.lines, ["published to 0 receivers"], "\(environment)")
    }

    /// A failed HELLO is answered only after a delay that grows with each failure on the connection
    /// (`auth_failure_delay`, here 1.5 s, then twice that, ...); commands sent behind it wait, and are answered in
    /// order; STATS counts the failures and the log names the peer's address. Another connection is not slowed: its
    /// HELLO is answered well within one delay (a long delay, so that bound has room on a loaded machine).
    func testFailedHellosAreSlowedDownMoreEachTimeAndCounted() throws {
        var settings = config
        let delay = 1.5
        settings.extraLines.append("auth_failure_delay: \(delay)")
        let daemon = try startDaemon(settings)
        let client = try connect(daemon, timeout: 15)
        var delays: [TimeInterval] = []
        for _ in 0..<2 {
            let start = Date()
            try client.send("HELLO token=wrong\nPING\n")
            assertError(try client.readReply(), "AUTH", "wrong token")
            delays.append(Date().timeIntervalSince(start))
            XCTAssertEqual(try client.readReply(), .status("PONG"), "the PING behind it, in order")
        }
        XCTAssertGreaterThanOrEqual(delays[0], delay - 0.05, "\(delays)")
        XCTAssertGreaterThanOrEqual(delays[1], 2 * delay - 0.05, "\(delays)")
        let other = try connect(daemon, "another connection")
        let start = Date()
        guard case .status = try other.command("HELLO token=s3cret") else { return XCTFail("right token refused") }
        XCTAssertLessThan(Date().timeIntervalSince(start), 0.8 * delay, "not slowed by the other's failures")
        XCTAssertEqual(try stats(other)["auth_failures"], "2")
        assertOutput(daemon.child.stderr, contains: "HELLO failed")
        assertOutput(daemon.child.stderr, contains: "address=127.0.0.1:")
        guard case .status = try client.command("HELLO token=s3cret") else { return XCTFail("then the right one") }
        XCTAssertEqual(try client.command("SUB N"), .ok())
    }

    /// A session that is closed while it sits out a failed HELLO (its auth_timeout passes, its peer ends its side, it
    /// is held again) ends cleanly: before the read source was balanced, subd crashed releasing a suspended one.
    /// auth_timeout (1.5 s) is half the failure delay (3 s), and long enough for the last connection's HELLO to be
    /// answered on a loaded machine.
    func testASessionClosedWhileItSitsOutAFailureEndsCleanly() throws {
        var settings = config
        settings.authTimeout = 1.5
        let failureDelay = 3.0
        settings.extraLines.append("auth_failure_delay: \(failureDelay)")
        let daemon = try startDaemon(settings)
        var clients: [LineClient] = []
        var lastSent = Date()
        for index in 0..<20 {
            let client = try connect(daemon, "held \(index)", timeout: 10)
            try client.send("HELLO token=wrong\n" + String(repeating: "PING\n", count: index * 1000))
            lastSent = Date()
            if index % 2 == 0 { try client.shutdownWrite() }
            clients.append(client)
        }
        // Past every held session's release (the failure delay after its HELLO), when the crash came.
        Thread.sleep(until: lastSent.addingTimeInterval(failureDelay + 0.6))
        for client in clients {
            XCTAssertNoThrow(try client.expectClosed(discardingData: true), "\(client.label): closed by auth_timeout")
            client.close()
        }
        let other = try connect(daemon, "after them")
        guard case .status = try other.command("HELLO token=s3cret") else { return XCTFail("subd is gone") }
        try eventually("every held session ended", timeout: 20) { try stats(other)["connections"] == "1" }
        XCTAssertEqual(try stats(other)["closed_auth_timeout"], "20")
    }
}
