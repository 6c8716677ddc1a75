import Foundation
import XCTest

/// Configuration sources and their precedence: command line, then SUBD_* environment, then the file, then defaults;
/// and a bad value stops subd at start with one line naming the key.
final class ConfigPrecedenceTests: IntegrationTestCase {
    func testEnvironmentOverridesTheFile() throws {
        let daemon = try startDaemon(DaemonConfig(maxLine: 300), environment: ["SUBD_MAX_LINE": "1024"])
        let client = try connect(daemon)
        let reply = try client.command("PING " + String(repeating: "x", count: 600))
        XCTAssertNil(reply.errorCode, "SUBD_MAX_LINE=1024 should win over max_line: 300 in the file")
        try client.sendLine("PING " + String(repeating: "y", count: 1100))
        assertError(try client.readReply(), "TOOBIG", "a line over SUBD_MAX_LINE")
    }

    func testCommandLineOverridesTheEnvironment() throws {
        // An invalid level in the environment is never read when --log-level is given.
        let daemon = try startDaemon(
            DaemonConfig(), extraArguments: ["--log-level", "debug"], environment: ["SUBD_LOG_LEVEL": "loud"])
        let client = try connect(daemon)
        XCTAssertNil(try client.command("PING").errorCode)
        // debug level from the command line: the connect is logged.
        try daemon.child.stderr.waitFor(substring: "client connected", timeout: 5)
    }

    func testNumbersFromTheFileExistAtStart() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["SCIENCE", "SCIENCE.physics"]))
        let client = try connect(daemon)
        let reply = try client.command("LIST")
        XCTAssertEqual(reply, .list(["SCIENCE 0", "SCIENCE.physics 0"]))
    }

    func testBadValueInTheFileStopsSubdWithOneLineNamingTheKey() throws {
        let result = try runSubd(yaml: "max_pending: lots\n")
        XCTAssertEqual(result.status, 78)
        XCTAssertEqual(result.lines.count, 1, "one line, got: \(result.lines)")
        XCTAssertTrue(result.lines.first?.contains("max_pending") == true, "names the key: \(result.lines)")
        XCTAssertTrue(result.lines.first?.contains("lots") == true, "shows the value: \(result.lines)")
    }

    func testBadValueInTheEnvironmentStopsSubdWithOneLineNamingTheKey() throws {
        let result = try runSubd(yaml: "log_level: info\n", environment: ["SUBD_MAX_CONNECTIONS": "0"])
        XCTAssertEqual(result.status, 78)
        XCTAssertEqual(result.lines.count, 1, "one line, got: \(result.lines)")
        XCTAssertTrue(result.lines.first?.contains("max_connections") == true, "names the key: \(result.lines)")
    }

    func testMisspelledKeyIsRefusedNotIgnored() throws {
        let result = try runSubd(yaml: "max_pendng: 4096\n")
        XCTAssertEqual(result.status, 78)
        XCTAssertEqual(result.lines.count, 1, "one line, got: \(result.lines)")
        XCTAssertTrue(result.lines.first?.contains("max_pendng: unknown key") == true, "\(result.lines)")
    }

    func testInvalidNumberToCreateAtStartIsAConfigError() throws {
        let result = try runSubd(yaml: "numbers: [\"SCIENCE\", \"a..b\"]\n")
        XCTAssertEqual(result.status, 78)
        XCTAssertTrue(result.lines.first?.contains("numbers: 'a..b' is not a valid number") == true, "\(result.lines)")
    }

    func testMaxPendingBelowMaxPayloadIsRefused() throws {
        let result = try runSubd(yaml: "max_payload: 1048576\nmax_pending: 65536\n")
        XCTAssertEqual(result.status, 78)
        XCTAssertTrue(
            result.lines.first?.contains("max_pending: must be at least max_payload") == true, "\(result.lines)")
    }

    func testLivenessValuesOutOfRangeAreRefusedNamingTheKey() throws {
        let cases: [(yaml: String, environment: [String: String?], says: String)] = [
            ("tcp_keepalive_count: 0\n", [:], "tcp_keepalive_count: must be 1 to 127, got 0"),
            ("tcp_keepalive_idle: -1\n", [:], "tcp_keepalive_idle: must be 0 (off) to 32767 seconds, got -1"),
            ("tcp_keepalive_interval: 40000\n", [:], "tcp_keepalive_interval: must be 1 to 32767 seconds"),
            ("command_timeout: -2\n", [:], "command_timeout: must be 0 (off) to 86400 seconds"),
            (
                "log_level: info\n", ["SUBD_AUTH_TIMEOUT": "soon"],
                "auth_timeout: must be a number of seconds, got 'soon'"
            ),
        ]
        for (yaml, environment, says) in cases {
            let result = try runSubd(yaml: yaml, environment: environment)
            XCTAssertEqual(result.status, 78, yaml)
            XCTAssertEqual(result.lines.count, 1, "one line, got: \(result.lines)")
            XCTAssertTrue(result.lines.first?.contains(says) == true, "\(result.lines) should say \(says)")
        }
    }

    func testUnknownOptionIsAUsageError() throws {
        let child = try ChildProcess(
            executable: try BinaryLocator.executable("subd"), arguments: ["--no-such-option"], label: "subd")
        XCTAssertEqual(child.waitForExit(timeout: 10), 64)
        assertOutput(child.stderr, contains: "unknown option '--no-such-option'")
    }

    /// Runs subd with a config file that should make it refuse to start; returns its exit status and stderr lines.
    private func runSubd(
        yaml: String, environment: [String: String?] = [:]
    ) throws -> (status: Int32?, lines: [String]) {
        let file = URL(fileURLWithPath: "/tmp/subd-it-bad-\(UUID().uuidString.prefix(8)).yaml")
        try yaml.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let child = try ChildProcess(
            executable: try BinaryLocator.executable("subd"),
            arguments: ["--config", file.path, "--listen", "127.0.0.1:0"], environment: environment, label: "subd")
        defer { child.kill9IfRunning() }
        let status = child.waitForExit(timeout: 10)
        _ = child.stderr.waitForEnd(timeout: 5)
        let lines = child.stderr.text.split(separator: "\n").map(String.init)
        return (status, lines)
    }
}
