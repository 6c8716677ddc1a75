import XCTest

/// `subctl listen --group NAME` (protocol 1.1, "Queue groups"), with the real subd in between.
final class SubctlGroupTests: IntegrationTestCase {
    /// Two members of one group share the messages in turn; a listener without a group gets every one; a member that
    /// leaves gets none from then on.
    func testGroupMembersShareTheMessagesAndAPlainListenerGetsAll() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["JOBS"]))
        let first = try listen(daemon, ["JOBS"], extra: ["--group", "workers"])
        XCTAssertTrue(first.stderr.contains("subctl: listening on JOBS (group workers)\n"), first.stderr)
        let second = try listen(daemon, ["JOBS"], extra: ["--group", "workers"])
        let everything = try listen(daemon, ["JOBS"])
        let publisher = try connect(daemon, "publisher")
        for index in 0..<10 {
            XCTAssertEqual(try publisher.command("SEND JOBS job\(index)"), .ok("2"), "one member and the plain one")
        }
        XCTAssertEqual(try (0..<10).map { _ in try everything.readTextLine() }, (0..<10).map { "job\($0)" })

        // Round-robin between two members: 5 each (read before stopping one, so none is still on its way).
        let secondGot = try (0..<5).map { _ in try second.readTextLine() }
        let firstGot = try (0..<5).map { _ in try first.readTextLine() }
        XCTAssertEqual(Set(firstGot + secondGot), Set((0..<10).map { "job\($0)" }), "each message went to one member")
        XCTAssertEqual(second.stop(), 0)
        second.child.stdout.waitForEnd(timeout: 5)
        XCTAssertEqual(lines(second.child.stdout.text), secondGot, "nothing more than its five")

        try eventually("the member that left is gone") { try listCounts(publisher)["JOBS"] == 2 }
        for index in 10..<14 { XCTAssertEqual(try publisher.command("SEND JOBS job\(index)"), .ok("2")) }
        XCTAssertEqual(try (10..<14).map { _ in try first.readTextLine() }, (10..<14).map { "job\($0)" })
        XCTAssertEqual(try (10..<14).map { _ in try everything.readTextLine() }, (10..<14).map { "job\($0)" })
        XCTAssertEqual(first.stop(), 0)
        XCTAssertEqual(everything.stop(), 0)
    }

    /// A group name follows the client-name rule; a bad one is a usage error before anything is sent. (This one
    /// needs no protocol 1.1 on the server.)
    func testBadGroupNameIsAUsageError() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["JOBS"]))
        for name in ["a b", "", String(repeating: "g", count: 65)] {
            let result = try subctl(daemon, "listen", ["JOBS", "--group", name])
            XCTAssertEqual(result.status, 64, "\(result)")
            XCTAssertTrue(result.stderr.contains("the group name '\(name)'"), "\(result)")
        }
        XCTAssertEqual(try listCounts(try connect(daemon))["JOBS"], 0, "nothing subscribed")
    }

    private func lines(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init)
    }
}
