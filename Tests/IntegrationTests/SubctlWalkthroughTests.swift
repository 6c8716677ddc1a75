import XCTest

/// The README walk-through with the real `subctl`: create, listen in the background, publish, see it arrive; and
/// create/remove output.
final class SubctlWalkthroughTests: IntegrationTestCase {
    func testReadmeWalkthroughCreateListenPublish() throws {
        let daemon = try startDaemon()
        let created = try subctl(daemon, "create", ["SCIENCE"])
        XCTAssertEqual(created.status, 0, "\(created)")
        XCTAssertEqual(created.output, "created SCIENCE\n", "\(created)")
        XCTAssertEqual(created.stderr, "", "\(created)")

        let listener = try listen(daemon, ["SCIENCE"])
        XCTAssertTrue(listener.stderr.contains("subctl: listening on SCIENCE"), listener.stderr)
        let published = try subctl(daemon, "publish", ["SCIENCE", "V1.0"])
        XCTAssertEqual(published.status, 0, "\(published)")
        XCTAssertEqual(published.output, "published to 1 receiver\n", "\(published)")
        XCTAssertEqual(try listener.readTextLine(), "V1.0")
        XCTAssertEqual(listener.stop(), 0, "listen exits 0 on SIGTERM; stderr: \(listener.stderr)")
    }

    func testCreateReportsCreatedOrExistsPerNumber() throws {
        let daemon = try startDaemon()
        let first = try subctl(daemon, "create", ["A", "B.c"])
        XCTAssertEqual(first.lines, ["created A", "created B.c"], "\(first)")
        XCTAssertEqual(first.status, 0)
        let second = try subctl(daemon, "create", ["B.c", "D"])
        XCTAssertEqual(second.lines, ["exists B.c", "created D"], "\(second)")
        XCTAssertEqual(second.status, 0)
        XCTAssertEqual(try listCounts(try connect(daemon)), ["A": 0, "B.c": 0, "D": 0])
    }

    func testRemoveReportsHowManySubscribersWereTold() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["EMPTY", "BUSY"]))
        let empty = try subctl(daemon, "remove", ["EMPTY"])
        XCTAssertEqual(empty.lines, ["removed EMPTY (0 subscribers told)"], "\(empty)")
        XCTAssertEqual(empty.status, 0)
        for index in 0..<2 { try subscribe(try connect(daemon, "subscriber \(index)"), "BUSY") }
        let busy = try subctl(daemon, "remove", ["BUSY"])
        XCTAssertEqual(busy.lines, ["removed BUSY (2 subscribers told)"], "\(busy)")
        XCTAssertEqual(busy.status, 0)
    }

    func testListenExitsOneWhenItsOnlyNumberIsRemoved() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["DOOMED"]))
        let listener = try listen(daemon, ["DOOMED"])
        let removed = try subctl(daemon, "remove", ["DOOMED"])
        XCTAssertNotNil(removed.output.wholeMatch(of: /removed DOOMED \(1 subscribers? told\)\n/), "\(removed)")
        XCTAssertEqual(listener.waitForExit(), 1, "no subscription left; stderr: \(listener.stderr)")
        XCTAssertTrue(listener.stderr.contains("subctl: number 'DOOMED' was removed\n"), listener.stderr)
    }

    func testListenGoesOnWhenAWildcardSubscriptionRemains() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["DOOMED", "KEPT.a"]))
        let listener = try listen(daemon, ["DOOMED", "KEPT.>"])
        XCTAssertTrue(listener.stderr.contains("subctl: listening on DOOMED, KEPT.>"), listener.stderr)
        XCTAssertEqual(try subctl(daemon, "remove", ["DOOMED"]).status, 0)
        try listener.child.stderr.waitFor(substring: "subctl: number 'DOOMED' was removed", timeout: 5)
        let published = try subctl(daemon, "publish", ["KEPT.a", "still", "here"])
        XCTAssertEqual(published.lines, ["published to 1 receiver"], "\(published)")
        XCTAssertEqual(try listener.readTextLine(), "still here")
        XCTAssertEqual(listener.stop(), 0)
    }
}
