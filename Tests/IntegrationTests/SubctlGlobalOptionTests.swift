import XCTest

/// `--server` and `--name` work before the subcommand as well as after it (`subctl --server X publish ...`).
final class SubctlGlobalOptionTests: IntegrationTestCase {
    func testGlobalOptionsBeforeTheSubcommand() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let subscriber = try connect(daemon, "subscriber")
        try subscribe(subscriber, "N")
        let result = try Subctl.run(["--server", daemon.server, "--name", "alice", "publish", "N", "hi"])
        XCTAssertEqual(result.status, 0, "\(result)")
        XCTAssertEqual(result.lines, ["published to 1 receiver"], "\(result)")
        let message = try subscriber.nextMessage()
        XCTAssertEqual(message.text, "hi")
        XCTAssertEqual(message.attributes["from"], "alice", "--name before the subcommand is sent with HELLO")
    }

    func testEqualsFormBeforeTheSubcommand() throws {
        let daemon = try startDaemon()
        let result = try Subctl.run(["--server=\(daemon.server)", "create", "X"])
        XCTAssertEqual(result.status, 0, "\(result)")
        XCTAssertEqual(result.lines, ["created X"], "\(result)")
    }

    func testRemoveSaysSubscriberForOne() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["ONE"]))
        try subscribe(try connect(daemon, "subscriber"), "ONE")
        let result = try Subctl.run(["remove", "ONE", "--server", daemon.server])
        XCTAssertEqual(result.lines, ["removed ONE (1 subscriber told)"], "\(result)")
    }
}

/// What `make install` puts beside subctl and what `--help` says without a server.
final class SubctlHelpAndCompletionTests: XCTestCase {
    /// `subctl --help` names every environment variable subctl reads.
    func testHelpListsTheEnvironment() throws {
        let result = try Subctl.run(["--help"])
        XCTAssertEqual(result.status, 0, "\(result)")
        for variable in ["SUBD_SERVER", "SUBD_TOKEN"] {
            XCTAssertTrue(result.output.contains(variable), "\(variable) missing from:\n\(result.output)")
        }
    }

    /// The completion scripts `make install` writes (bash, zsh, fish) cover every subcommand and listen's options.
    func testCompletionScriptsCoverTheCommands() throws {
        for shell in ["bash", "zsh", "fish"] {
            let result = try Subctl.run(["--generate-completion-script", shell])
            XCTAssertEqual(result.status, 0, "\(shell): \(result)")
            for word in ["create", "publish", "listen", "watch", "no-reconnect", "raw", "interval"] {
                XCTAssertTrue(result.output.contains(word), "\(shell) completion lacks \(word)")
            }
        }
    }
}
