import XCTest

/// LIST and STATS.
final class ListAndStatsTests: IntegrationTestCase {
    func testListOfNothingIsAnEmptyList() throws {
        let daemon = try startDaemon()
        XCTAssertEqual(try connect(daemon).command("LIST"), .list([]))
    }

    func testListShowsNumbersSortedWithSubscriberCounts() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        try create(client, "zeta", "ALPHA", "MIDDLE.b", "MIDDLE", "MIDDLE.a")
        let subscriber = try connect(daemon, "subscriber")
        try subscribe(subscriber, "MIDDLE.a", "ALPHA")
        try subscribe(try connect(daemon, "second"), "ALPHA")
        let expected = ["ALPHA 2", "MIDDLE 0", "MIDDLE.a 1", "MIDDLE.b 0", "zeta 0"]
        XCTAssertEqual(try client.command("LIST"), .list(expected), "byte order: upper case before lower case")
    }

    func testListCountsWildcardSubscribersOncePerSession() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        try create(client, "S.a", "S.b.c", "T")
        let star = try connect(daemon, "star")
        try subscribe(star, "S.*", "S.a")
        let all = try connect(daemon, "all")
        try subscribe(all, ">")
        XCTAssertEqual(try client.command("LIST"), .list(["S.a 2", "S.b.c 1", "T 1"]))
    }

    func testListWithPatternShowsOnlyMatchingNumbers() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        try create(client, "S", "S.a", "S.b", "S.b.c", "T.a")
        XCTAssertEqual(try client.command("LIST S.*"), .list(["S.a 0", "S.b 0"]))
        XCTAssertEqual(try client.command("LIST S.>"), .list(["S.a 0", "S.b 0", "S.b.c 0"]))
        XCTAssertEqual(try client.command("LIST *.a"), .list(["S.a 0", "T.a 0"]))
        XCTAssertEqual(try client.command("LIST T.a"), .list(["T.a 0"]))
        XCTAssertEqual(try client.command("LIST NONE.*"), .list([]))
        XCTAssertEqual(try client.command("LIST >"), .list(["S 0", "S.a 0", "S.b 0", "S.b.c 0", "T.a 0"]))
    }

    func testStatsHasEveryKeyWithAnIntegerValue() throws {
        let daemon = try startDaemon()
        let values = try stats(try connect(daemon))
        let integerKeys = [
            "uptime_seconds", "connections", "total_connections", "numbers", "subscriptions", "messages_published",
            "messages_delivered", "bytes_in", "bytes_out", "slow_consumers",
        ]
        XCTAssertNotNil(values["version"], "STATS has no version: \(values)")
        XCTAssertFalse(values["version"]?.isEmpty ?? true)
        for key in integerKeys {
            guard let value = values[key] else {
                XCTFail("STATS has no \(key): \(values)")
                continue
            }
            XCTAssertNotNil(UInt64(value), "STATS \(key) \(value) is not a non-negative integer")
        }
    }

    func testStatsCountsConnectionsNumbersSubscriptionsAndMessages() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["BOOT"]))
        let client = try connect(daemon)
        let before = try stats(client)
        XCTAssertEqual(before["connections"], "1")
        XCTAssertEqual(before["numbers"], "1", "the number from the config")
        XCTAssertEqual(before["subscriptions"], "0")
        XCTAssertEqual(before["messages_published"], "0")
        XCTAssertEqual(before["slow_consumers"], "0")

        let subscriber = try connect(daemon, "subscriber")
        try create(client, "MORE")
        try subscribe(subscriber, "BOOT", "MORE", "X.*")
        XCTAssertEqual(try client.command("SEND BOOT hi"), .ok("1"))
        XCTAssertEqual(try client.command("SEND MORE hi"), .ok("1"))
        XCTAssertEqual(try subscriber.nextMessage().text, "hi")
        XCTAssertEqual(try subscriber.nextMessage().text, "hi")
        let after = try stats(client)
        XCTAssertEqual(after["connections"], "2")
        XCTAssertEqual(after["numbers"], "2")
        XCTAssertEqual(after["subscriptions"], "3")
        XCTAssertEqual(after["messages_published"], "2")
        XCTAssertEqual(after["messages_delivered"], "2")
        XCTAssertGreaterThan(Int(after["bytes_in"] ?? "") ?? 0, Int(before["bytes_in"] ?? "") ?? Int.max)
        XCTAssertGreaterThan(Int(after["bytes_out"] ?? "") ?? 0, Int(before["bytes_out"] ?? "") ?? Int.max)
        XCTAssertGreaterThanOrEqual(Int(after["total_connections"] ?? "") ?? 0, 2)
    }
}
