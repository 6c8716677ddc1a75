import Foundation
import XCTest

/// The YAML config file: every key is optional.
final class ConfigFileTests: IntegrationTestCase {
    /// Regression: subd refused a config file holding only comments ("Top level YAML value is not a mapping"),
    /// although every key is optional (e.g. a fully commented-out sample config).
    func testConfigFileWithOnlyCommentsMeansAllDefaults() throws {
        let file = URL(fileURLWithPath: "/tmp/subd-it-empty-\(UUID().uuidString.prefix(8)).yaml")
        try "# every key left at its default\n# max_line: 65536\n".write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        try assertSubdStarts(config: file, "a comments-only config")
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
