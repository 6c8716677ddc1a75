import XCTest

/// `subctl list`, `stats` and `ping` print what the server answers.
final class SubctlQueryTests: IntegrationTestCase {
    func testListPrintsTheListLines() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["B", "A", "A.x"]))
        try subscribe(try connect(daemon, "subscriber"), "A")
        let all = try subctl(daemon, "list")
        XCTAssertEqual(all.status, 0, "\(all)")
        XCTAssertEqual(all.lines, ["A 1", "A.x 0", "B 0"], "\(all)")
        let some = try subctl(daemon, "list", ["A.*"])
        XCTAssertEqual(some.lines, ["A.x 0"], "\(some)")
        XCTAssertEqual(some.status, 0)
    }

    func testStatsPrintsTheStatsLines() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["S"]))
        let result = try subctl(daemon, "stats")
        XCTAssertEqual(result.status, 0, "\(result)")
        let keys = Set(result.lines.map { String($0.split(separator: " ", maxSplits: 1).first ?? "") })
        for key in ["version", "uptime_seconds", "connections", "numbers", "slow_consumers", "messages_published"] {
            XCTAssertTrue(keys.contains(key), "stats has no \(key): \(result)")
        }
        XCTAssertTrue(result.lines.contains("numbers 1"), "\(result)")
    }

    func testPingPrintsPong() throws {
        let daemon = try startDaemon()
        let result = try subctl(daemon, "ping")
        XCTAssertEqual(result.status, 0, "\(result)")
        XCTAssertEqual(result.lines.count, 1, "\(result)")
        XCTAssertTrue(result.output.hasPrefix("PONG"), "\(result)")
    }
}
