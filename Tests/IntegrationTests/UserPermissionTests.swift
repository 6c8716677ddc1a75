import Foundation
import XCTest

/// Users and permissions (docs/PROTOCOL.md, Users and permissions) over the real subd: each verb denied for a
/// user without the right, with the connection still in step; `from=` is the verified user name; a reload applies
/// new rights to open sessions.
final class UserPermissionTests: IntegrationTestCase {
    /// `subd hash-secret` for each secret, run once per test process (XCTest runs the tests one at a time).
    nonisolated(unsafe) private static var hashes: [String: String] = [:]

    private func hash(_ secret: String) throws -> String {
        if let known = Self.hashes[secret] { return known }
        let subd = try BinaryLocator.executable("subd")
        let child = try ChildProcess(
            executable: subd, arguments: ["hash-secret"], environment: [:], stdinPipe: true, label: "subd hash-secret")
        try child.writeStdinAndClose(Array((secret + "\n").utf8))
        XCTAssertEqual(child.waitForExit(timeout: 10), 0, child.stderr.text)
        child.stdout.waitForEnd(timeout: 5)
        let text = child.stdout.text.trimmingCharacters(in: .whitespacesAndNewlines)
        Self.hashes[secret] = text
        return text
    }

    /// alice may publish below SCIENCE and subscribe below SCIENCE (not SCIENCE.secret) and to NEWS.*; admin may do
    /// everything, `$SYS.` included.
    private func config(aliceSubscribe: [String] = ["SCIENCE.>", "NEWS.*"], withAlice: Bool = true) throws
        -> DaemonConfig
    {
        var lines = ["auth_token: \"shared\"", "users:"]
        if withAlice {
            lines += [
                "  - name: alice",
                "    secret_hash: \"\(try hash("alice-pw"))\"",
                "    publish: [\"SCIENCE.>\"]",
                "    subscribe: [" + aliceSubscribe.map { "\"\($0)\"" }.joined(separator: ", ") + "]",
                "    deny_subscribe: [\"SCIENCE.secret.>\"]",
            ]
        }
        lines += [
            "  - name: admin",
            "    secret_hash: \"\(try hash("admin-pw"))\"",
            "    publish: [\">\"]",
            "    subscribe: [\">\", \"$SYS.>\"]",
            "    create_remove: true",
        ]
        return DaemonConfig(numbers: ["SCIENCE.physics", "SCIENCE.secret.x", "NEWS.a", "OTHER"], extraLines: lines)
    }

    private func login(_ client: LineClient, _ user: String, _ secret: String) throws {
        guard case .status(let text) = try client.command("HELLO name=\(user) token=\(secret)"),
            text.hasPrefix("OK subd")
        else { throw HarnessError.malformed("\(user) could not log in") }
    }

    func testEachVerbIsDeniedWithoutTheRightAndTheConnectionStaysInStep() throws {
        let daemon = try startDaemon(try config())
        let alice = try connect(daemon, "alice")
        assertError(try alice.command("SUB NEWS.a"), "AUTH", "before HELLO")
        try login(alice, "alice", "alice-pw")
        let denied = [
            "CREATE MINE", "REMOVE OTHER", "SEND OTHER x", "SEND SCIENCE x", "SUB OTHER", "SUB >", "SUB *",
            "SUB SCIENCE.>", "SUB SCIENCE.secret.x", "SUB NEWS.>", "GET OTHER", "CREATE $SYS.x", "SUB $SYS.>",
        ]
        for line in denied { assertError(try alice.command(line), "DENIED", line) }
        try alice.sendPub("OTHER", Array("PING\n".utf8))
        assertError(try alice.readReply(), "DENIED", "PUB OTHER")
        XCTAssertEqual(try alice.command("PING"), .status("PONG"), "the PUB's payload was read, not run")
        for line in ["SUB SCIENCE.physics", "SUB SCIENCE.*", "SUB NEWS.*", "SUB NEWS.a", "UNSUB NEWS.a"] {
            XCTAssertEqual(try alice.command(line), .ok(), line)
        }
        XCTAssertEqual(try alice.command("SEND SCIENCE.physics hi"), .ok("1"), "to itself, through SCIENCE.*")
        XCTAssertEqual(try alice.nextMessage().text, "hi")
        let admin = try connect(daemon, "admin")
        try login(admin, "admin", "admin-pw")
        XCTAssertEqual(
            try admin.command("LIST"), .list(["NEWS.a 1", "OTHER 0", "SCIENCE.physics 1", "SCIENCE.secret.x 0"]),
            "no denied command changed anything")
        XCTAssertEqual(try stats(admin)["denied"], "\(denied.count + 1)")
        XCTAssertEqual(try admin.command("CREATE MINE"), .ok("created"))
        XCTAssertEqual(try admin.command("SUB $SYS.>"), .ok())
        XCTAssertEqual(try admin.command("REMOVE MINE"), .ok("removed 0"))
    }

    func testAUserCannotForgeFromAndTheSharedTokenStillHasEveryRight() throws {
        let daemon = try startDaemon(try config())
        let shared = try connect(daemon, "shared token")
        guard case .status = try shared.command("HELLO name=anyone token=shared") else { return XCTFail("token") }
        XCTAssertEqual(try shared.command("SUB >"), .ok(), "the shared token is a user with every right")
        let alice = try connect(daemon, "alice")
        try login(alice, "alice", "alice-pw")
        assertError(try alice.command("HELLO name=admin"), "DENIED", "a user keeps its name")
        XCTAssertEqual(try alice.command("SEND SCIENCE.physics signed"), .ok("1"))
        XCTAssertEqual(try shared.nextMessage().from, "alice", "from= is the verified user name")
        let impostor = try connect(daemon, "impostor")
        assertError(try impostor.command("HELLO name=admin token=alice-pw"), "AUTH", "another user's secret")
        assertError(try impostor.command("HELLO name=nobody token=alice-pw"), "AUTH", "no such user")
        assertError(try impostor.command("SUB NEWS.a"), "AUTH", "still not in")
    }

    func testAReloadAppliesNewRightsAndClosesTheSessionsTheyNoLongerCover() throws {
        let daemon = try startDaemon(try config())
        let alice = try connect(daemon, "alice, subscribed to NEWS.*")
        try login(alice, "alice", "alice-pw")
        XCTAssertEqual(try alice.command("SUB NEWS.*"), .ok())
        let publisher = try connect(daemon, "alice, publishing")
        try login(publisher, "alice", "alice-pw")
        XCTAssertEqual(try publisher.command("SEND SCIENCE.physics before"), .ok("0"), "allowed, and remembered")
        let admin = try connect(daemon, "admin")
        try login(admin, "admin", "admin-pw")

        // Rights narrowed: publishing below SCIENCE is no longer allowed, NEWS.* no longer subscribable.
        var narrowed = try config(aliceSubscribe: ["SCIENCE.>"])
        narrowed.extraLines = narrowed.extraLines.map {
            $0 == "    publish: [\"SCIENCE.>\"]" ? "    publish: [\"NEWS.a\"]" : $0
        }
        try narrowed.yaml.write(to: daemon.configFile, atomically: true, encoding: .utf8)
        daemon.child.send(signal: SIGHUP)
        try daemon.child.stderr.waitFor(substring: "configuration reloaded", timeout: 5)
        assertError(try alice.readReply(), "DENIED", "told, then closed: it holds NEWS.*")
        XCTAssertNoThrow(try alice.expectClosed())
        alice.close()
        assertError(try publisher.command("SEND SCIENCE.physics after"), "DENIED", "the remembered answer is gone")
        XCTAssertEqual(try publisher.command("SEND NEWS.a ok"), .ok("0"), "the new right is in force")
        XCTAssertEqual(
            try publisher.command("LIST"), .list(["SCIENCE.physics 0"]), "LIST shows what it may subscribe to")

        // The user removed: its remaining session is closed.
        try config(withAlice: false).yaml.write(to: daemon.configFile, atomically: true, encoding: .utf8)
        daemon.child.send(signal: SIGHUP)
        assertError(try publisher.readReply(), "AUTH", "told why")
        XCTAssertNoThrow(try publisher.expectClosed())
        publisher.close()
        try eventually("both revoked sessions are counted") { try stats(admin)["closed_revoked"] == "2" }
    }

    /// The shared token may not take a user's name, so `from=<user>` is always that user's.
    func testTheSharedTokenCannotTakeAUsersName() throws {
        let daemon = try startDaemon(try config())
        let shared = try connect(daemon, "shared token")
        guard case .status = try shared.command("HELLO token=shared") else { return XCTFail("token") }
        assertError(try shared.command("HELLO name=alice"), "DENIED", "rename to a user's name")
        assertError(try shared.command("HELLO name=alice token=shared"), "DENIED", "log in with a user's name")
        guard case .status = try shared.command("HELLO name=carol") else { return XCTFail("any other name") }
    }

    /// Denied SUBs with from= or group= change nothing, and push no retained value.
    func testADeniedSubWithFromOrGroupPushesNothing() throws {
        let daemon = try startDaemon(try config())
        let admin = try connect(daemon, "admin")
        try login(admin, "admin", "admin-pw")
        XCTAssertEqual(try admin.command("CREATE VAULT retain"), .ok("created"))
        XCTAssertEqual(try admin.command("SEND VAULT gold"), .ok("0"))
        let alice = try connect(daemon, "alice")
        try login(alice, "alice", "alice-pw")
        for line in ["SUB VAULT from=admin", "SUB VAULT group=g", "SUB * group=g", "GET VAULT"] {
            assertError(try alice.command(line), "DENIED", line)
        }
        XCTAssertEqual(try alice.pushesBeforePing(), [], "no retained value pushed")
        XCTAssertEqual(try admin.command("LIST VAULT"), .list(["VAULT 0"]), "not subscribed")
    }

    /// Ten wrong secrets close the connection (here with `auth_failure_delay: 0.02`, so the delays add up to 0.9 s).
    func testTenWrongSecretsCloseTheConnection() throws {
        var settings = try config()
        settings.extraLines.append("auth_failure_delay: 0.02")
        let daemon = try startDaemon(settings)
        let client = try connect(daemon, "guesser")
        for attempt in 1...9 {
            // Known and unknown names alike: each is checked (the unknown against a stand-in hash) and fails.
            let name = attempt % 2 == 0 ? "alice" : "nobody"
            assertError(try client.command("HELLO name=\(name) token=guess\(attempt)"), "AUTH", "attempt \(attempt)")
        }
        let last = try client.command("HELLO name=alice token=guess10")
        assertError(last, "AUTH", "the 10th")
        XCTAssertTrue("\(last)".contains("closing the connection"), "\(last)")
        XCTAssertNoThrow(try client.expectClosed())
        client.close()
        let admin = try connect(daemon, "admin")
        try login(admin, "admin", "admin-pw")
        XCTAssertEqual(try stats(admin)["auth_failures"], "10")
        try eventually("the closed connection is counted") { try stats(admin)["closed_auth_failures"] == "1" }
    }
}
