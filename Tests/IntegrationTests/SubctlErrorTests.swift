import Glibc
import XCTest

/// subctl's error lines and exit codes: 1 the server refused, 64 usage error, 69 server unavailable or lost.
final class SubctlErrorTests: IntegrationTestCase {
    func testPublishToMissingNumberSaysHowToCreateItAndExitsOne() throws {
        let daemon = try startDaemon()
        let result = try subctl(daemon, "publish", ["SCIENCE", "V1.0"])
        XCTAssertEqual(result.status, 1, "\(result)")
        XCTAssertEqual(
            result.stderr, "subctl: no subscription number 'SCIENCE' (create it with: subctl create SCIENCE)\n",
            "\(result)")
        XCTAssertEqual(result.output, "")
    }

    /// Regression: at max_connections subctl often said "lost the connection" (exit 69): the `-ERR LIMIT` that subd
    /// sends on connect arrived before HELLO and the client took it for a protocol violation.
    func testServerAtMaxConnectionsIsReportedAsItsRefusal() throws {
        let daemon = try startDaemon(DaemonConfig(maxConnections: 1))
        let holder = try connect(daemon, "holder")
        assertOpen(holder)
        for round in 0..<5 {
            let result = try subctl(daemon, "ping")
            XCTAssertEqual(result.status, 1, "round \(round): \(result)")
            XCTAssertEqual(result.errorLines.count, 1, "round \(round): \(result)")
            XCTAssertTrue(result.stderr.contains("LIMIT"), "round \(round): \(result)")
        }
    }

    func testListenToMissingNumberExitsOneWithOneLine() throws {
        let daemon = try startDaemon()
        let result = try subctl(daemon, "listen", ["NOPE"])
        XCTAssertEqual(result.status, 1, "\(result)")
        XCTAssertEqual(result.errorLines.count, 1, "\(result)")
        XCTAssertTrue(result.stderr.hasPrefix("subctl: "), "\(result)")
        XCTAssertTrue(result.stderr.contains("NOPE"), "\(result)")
    }

    /// subctl checks names with the wire's rules before sending (the server would answer `-ERR NAME`): a bad one is
    /// a usage error that names the rule it breaks.
    func testInvalidNumberIsAUsageErrorNamingTheRule() throws {
        let daemon = try startDaemon()
        let cases: [([String], String)] = [
            (["create", "a..b"], "the number 'a..b' has an empty token"),
            (["publish", "A.*", "x"], "the number 'A.*' has a wildcard token"),
            (["listen", "A.>.B"], "the pattern 'A.>.B' has '>' before its last token"),
            (["list", "A..*"], "the pattern 'A..*' has an empty token"),
            (["ping", "--name", "a\u{7F}"], "the client name 'a\u{7F}' holds the control character 0x7f"),
        ]
        for (arguments, message) in cases {
            let result = try subctl(daemon, arguments[0], Array(arguments.dropFirst()))
            XCTAssertEqual(result.status, 64, "\(result)")
            XCTAssertTrue(result.stderr.contains(message), "\(result)")
            XCTAssertEqual(result.output, "")
        }
        XCTAssertEqual(try subctl(daemon, "list", []).output, "", "nothing was created")
    }

    func testNothingListeningSaysIsSubdRunningAndExits69() throws {
        let port = try TestAddress.freeLoopbackPort()
        let result = try Subctl.run(["ping", "--server", "127.0.0.1:\(port)"])
        XCTAssertEqual(result.status, 69, "\(result)")
        XCTAssertEqual(
            result.stderr, "subctl: cannot connect to 127.0.0.1:\(port): connection refused (is subd running?)\n",
            "\(result)")
        XCTAssertEqual(result.output, "")
    }

    /// With --no-reconnect (without it, listen connects again: SubctlReconnectTests).
    func testListenNoReconnectExits69WhenTheServerGoesAway() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let listener = try listen(daemon, ["N"], extra: ["--no-reconnect"])
        XCTAssertEqual(daemon.stop(), 0, "subd log:\n\(daemon.log)")
        XCTAssertEqual(listener.waitForExit(), 69, "connection lost; stderr: \(listener.stderr)")
        XCTAssertTrue(listener.stderr.contains("subctl: "), listener.stderr)
    }

    func testUsageErrorsExit64() throws {
        let daemon = try startDaemon()
        let cases: [[String]] = [
            ["frobnicate"],
            ["publish", "--server", daemon.server],
            ["listen", "--server", daemon.server],
            ["listen", "--server", daemon.server, "--count", "many", "N"],
            ["create", "--server", daemon.server, "--no-such-option", "N"],
        ]
        for arguments in cases {
            let result = try Subctl.run(arguments)
            XCTAssertEqual(result.status, 64, "\(result)")
            XCTAssertFalse(result.stderr.isEmpty, "a usage error says what is wrong: \(result)")
        }
    }

    func testHelpDocumentsTheExitCodes() throws {
        let result = try Subctl.run(["--help"])
        XCTAssertEqual(result.status, 0, "\(result)")
        for code in ["64", "69"] {
            XCTAssertTrue(result.output.contains(code), "--help does not mention exit code \(code): \(result)")
        }
    }
}
