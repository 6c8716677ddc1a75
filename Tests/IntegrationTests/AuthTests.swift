import XCTest

/// `auth_token`: until `HELLO token=<secret>` succeeds, every command but HELLO, PING and QUIT gets `-ERR AUTH`.
final class AuthTests: IntegrationTestCase {
    private let config = DaemonConfig(numbers: ["N"], extraLines: ["auth_token: \"s3cret\""])

    func testCommandsNeedTheTokenFirst() throws {
        let daemon = try startDaemon(config)
        let client = try connect(daemon)
        assertError(try client.command("SUB N"), "AUTH", "SUB before HELLO")
        XCTAssertEqual(try client.command("PING"), .status("PONG"), "PING needs no token")
        assertError(try client.command("HELLO token=wrong"), "AUTH", "wrong token")
        assertError(try client.command("HELLO name=al"), "AUTH", "no token")
        guard case .status(let text) = try client.command("HELLO token=s3cret name=al"), text.hasPrefix("OK subd ")
        else { return XCTFail("right token refused") }
        XCTAssertEqual(try client.command("SUB N"), .ok())
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
        let environment = try Subctl.run(["publish", "N", "x", "--server", daemon.server],
                                         environment: ["SUBD_TOKEN": "s3cret"])
        XCTAssertEqual(environment.lines, ["published to 0 receivers"], "\(environment)")
    }
}
