import Foundation
import XCTest

/// Users and permissions (shared/PROTOCOL.md "Users and permissions") over the real subd: each verb denied for a
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
    private func config(aliceSubscribe: [String] = ["SCIENCE.>", "NEWS.*"], withAlice: Bool = true) throws -> DaemonConfig {
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
        guard case .status(let text) = try client.command("HELLO name=\(user) token=\(secret)"), text.hasPrefix("OK subd")
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
        XCTAssertEqual(try admin.command("LIST"), .list(["NEWS.a 1", "OTHER 0", "SCIENCE.physics 1", "SCIENCE.secret.x 0"]),
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

    func testAReloadNarrowsRightsOfOpenSessionsAndClosesARemovedUsersSession() throws {
        let daemon = try startDaemon(try config())
        let alice = try connect(daemon, "alice")
        try login(alice, "alice", "alice-pw")
        XCTAssertEqual(try alice.command("SUB NEWS.*"), .ok())
        XCTAssertEqual(try alice.command("SUB SCIENCE.physics"), .ok())
        let admin = try connect(daemon, "admin")
        try login(admin, "admin", "admin-pw")

        try config(aliceSubscribe: ["SCIENCE.>"]).yaml.write(to: daemon.configFile, atomically: true, encoding: .utf8)
        daemon.child.send(signal: SIGHUP)
        XCTAssertEqual(try alice.nextPush(), .gone("NEWS.*"), "the subscription the new rights do not allow ends")
        XCTAssertEqual(try admin.command("SEND NEWS.a x"), .ok("0"))
        XCTAssertEqual(try admin.command("SEND SCIENCE.physics y"), .ok("1"), "the allowed one stays")
        XCTAssertEqual(try alice.nextMessage().text, "y")
        assertError(try alice.command("SUB NEWS.*"), "DENIED", "the new rights are in force")

        try config(withAlice: false).yaml.write(to: daemon.configFile, atomically: true, encoding: .utf8)
        daemon.child.send(signal: SIGHUP)
        assertError(try alice.readReply(), "AUTH", "told why")
        XCTAssertNoThrow(try alice.expectClosed())
        alice.close()
        try eventually("the revoked session is counted") { try stats(admin)["closed_revoked"] == "1" }
    }

    /// Ten wrong secrets close the connection (here with `auth_failure_delay: 0.02`, so the delays add up to 0.9 s).
    func testTenWrongSecretsCloseTheConnection() throws {
        var settings = try config()
        settings.extraLines.append("auth_failure_delay: 0.02")
        let daemon = try startDaemon(settings)
        let client = try connect(daemon, "guesser")
        for attempt in 1...9 {
            assertError(try client.command("HELLO name=alice token=guess\(attempt)"), "AUTH", "attempt \(attempt)")
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
