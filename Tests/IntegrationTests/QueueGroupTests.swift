import XCTest

/// Protocol 1.1 queue groups over real sockets: `SUB <pattern> group=<name>`: one member of a group gets each
/// publication, round-robin, its `MSG` marked `group=<name>`; plain subscribers get every one.
final class QueueGroupTests: IntegrationTestCase {
    func testThreeMembersShareThreeThousandMessagesAndAPlainSubscriberGetsAll() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["JOBS"]))
        let members = try (0..<3).map { try connect(daemon, "member \($0)") }
        for member in members { XCTAssertEqual(try member.command("SUB JOBS group=workers"), .ok()) }
        let plain = try connect(daemon, "plain")
        try subscribe(plain, "JOBS")
        let publisher = try connect(daemon, "publisher")
        for batch in 0..<30 {
            var bytes: [UInt8] = []
            for index in 0..<100 { bytes += Array("SEND JOBS \(batch * 100 + index)\n".utf8) }
            try publisher.send(bytes)
            for _ in 0..<100 {
                XCTAssertEqual(try publisher.readReply(), .ok("2"), "the plain subscriber and one member")
            }
        }
        var counts: [Int] = []
        for member in members {
            let messages = try member.pushesBeforePing().compactMap(\.message)
            XCTAssertTrue(messages.allSatisfy { $0.attributes["group"] == "workers" }, "marked group=workers")
            counts.append(messages.count)
        }
        XCTAssertEqual(counts.reduce(0, +), 3000, "each message to exactly one member")
        for count in counts { XCTAssertLessThanOrEqual(abs(count - 1000), 1, "round-robin: \(counts)") }
        let all = try plain.pushesBeforePing().compactMap(\.message)
        XCTAssertEqual(all.count, 3000)
        XCTAssertTrue(all.allSatisfy { $0.attributes["group"] == nil }, "a plain delivery is not marked")
        XCTAssertEqual(all.map(\.text), (0..<3000).map(String.init), "in publish order")
    }

    func testAMemberThatLeavesStopsGettingAnyAtOnce() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["JOBS"]))
        let staying = try connect(daemon, "staying")
        let leaving = try connect(daemon, "leaving")
        XCTAssertEqual(try staying.command("SUB JOBS group=w"), .ok())
        XCTAssertEqual(try leaving.command("SUB JOBS group=w"), .ok())
        XCTAssertEqual(try leaving.command("UNSUB JOBS"), .ok())
        let publisher = try connect(daemon, "publisher")
        for index in 0..<20 { XCTAssertEqual(try publisher.command("SEND JOBS \(index)"), .ok("1")) }
        XCTAssertEqual(try leaving.pushesBeforePing(), [], "no message after its UNSUB's +OK")
        XCTAssertEqual(try staying.pushesBeforePing().count, 20)
        leaving.close()
        XCTAssertEqual(try publisher.command("SEND JOBS last"), .ok("1"))
    }

    /// Mid-stream: after a member's UNSUB is answered, the messages published from then on go to the others only.
    func testAMemberThatLeavesMidStreamGetsNothingPublishedAfterItsUnsub() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["JOBS"]))
        let members = try (0..<3).map { try connect(daemon, "member \($0)") }
        for member in members { XCTAssertEqual(try member.command("SUB JOBS group=w"), .ok()) }
        let publisher = try connect(daemon, "publisher")
        for index in 0..<300 { XCTAssertEqual(try publisher.command("SEND JOBS before-\(index)"), .ok("1")) }
        XCTAssertEqual(try members[0].command("UNSUB JOBS"), .ok())
        let before = members[0].takePushes().compactMap(\.message)
        XCTAssertEqual(before.count, 100, "its share of the first 300")
        for index in 0..<300 { XCTAssertEqual(try publisher.command("SEND JOBS after-\(index)"), .ok("1")) }
        XCTAssertEqual(try members[0].pushesBeforePing(), [], "nothing after its UNSUB")
        let rest = try members[1...].map { try $0.pushesBeforePing().compactMap(\.message) }
        XCTAssertEqual(rest.map(\.count), [250, 250], "100 each before, then 150 each")
        XCTAssertEqual(rest.flatMap { $0 }.filter { $0.text.hasPrefix("after-") }.count, 300)
    }

    func testASessionGetsAMessageOnceThoughItIsAPlainSubscriberAndAMember() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["JOBS"]))
        let both = try connect(daemon, "both")
        XCTAssertEqual(try both.command("SUB JOBS group=w"), .ok())
        XCTAssertEqual(try both.command("SUB J.> "), .ok(), "a wildcard that does not match JOBS")
        XCTAssertEqual(try both.command("SUB *"), .ok(), "a plain wildcard that does")
        let publisher = try connect(daemon, "publisher")
        XCTAssertEqual(try publisher.command("SEND JOBS x"), .ok("1"), "one session, counted once")
        XCTAssertEqual(try both.pushesBeforePing().count, 1)
    }

    func testTwoGroupsEachGetEveryMessageOnce() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["A.x"]))
        let a1 = try connect(daemon, "a1")
        let a2 = try connect(daemon, "a2")
        let b1 = try connect(daemon, "b1")
        XCTAssertEqual(try a1.command("SUB A.x group=a"), .ok())
        XCTAssertEqual(try a2.command("SUB A.* group=a"), .ok(), "a wildcard member of the same group")
        XCTAssertEqual(try b1.command("SUB > group=b"), .ok())
        let publisher = try connect(daemon, "publisher")
        for index in 0..<10 { XCTAssertEqual(try publisher.command("SEND A.x \(index)"), .ok("2")) }
        XCTAssertEqual(try a1.pushesBeforePing().count + a2.pushesBeforePing().count, 10)
        let b = try b1.pushesBeforePing().compactMap(\.message)
        XCTAssertEqual(b.count, 10)
        XCTAssertEqual(b.first?.attributes["group"], "b")
    }
}
