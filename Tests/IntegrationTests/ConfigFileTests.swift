import Foundation
import XCTest

/// The YAML config file: every key is optional.
final class ConfigFileTests: IntegrationTestCase {
    /// Regression: subd refused a config file holding only comments ("Top level YAML value is not a mapping"),
    /// although every key is optional (e.g. a fully commented-out sample config).
    func testConfigFileWithOnlyCommentsMeansAllDefaults() throws {
        let executable = try BinaryLocator.executable("subd")
        let file = URL(fileURLWithPath: "/tmp/subd-it-empty-\(UUID().uuidString.prefix(8)).yaml")
        try "# every key left at its default\n# max_line: 65536\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let child = try ChildProcess(
            executable: executable, arguments: ["--config", file.path, "--listen", "127.0.0.1:0"], label: "subd")
        defer { child.kill9IfRunning() }
        do {
            try child.stderr.waitFor(substring: "listening on tcp 127.0.0.1:", timeout: 10)
        } catch {
            return XCTFail("subd did not start with a comments-only config: \(error)")
        }
        child.send(signal: SIGTERM)
        XCTAssertEqual(child.waitForExit(timeout: 10), 0)
    }

    func testConfigLimitsAreApplied() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"], maxLine: 300, maxSubscriptions: 1))
        let client = try connect(daemon)
        try subscribe(client, "N")
        assertError(try client.command("SUB X.*"), "LIMIT", "max_subscriptions: 1 from the config file")
        XCTAssertEqual(try client.command("PING " + String(repeating: "y", count: 200)).errorCode, nil)
        try client.sendLine("PING " + String(repeating: "x", count: 400))
        assertError(try client.readReply(), "TOOBIG", "max_line: 300 from the config file")
    }
}
