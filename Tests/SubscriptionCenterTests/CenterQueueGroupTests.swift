import XCTest

@testable import SubscriptionCenter

/// Queue groups in the center: one matching member per group gets each message, round-robin; a group's entry
/// (its count and turn) lives exactly as long as it has subscriptions.
final class CenterQueueGroupTests: XCTestCase {
    func testOneMemberPerGroupRoundRobin() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let log = DeliveryLog()
        let members = (0..<3).map { Probe("m\($0)", log: log) }
        for member in members { try center.add(member, to: "N", group: "workers") }
        let plain = Probe("plain", log: log)
        try center.add(plain, to: "N")
        for i in 0..<6 { XCTAssertEqual(try center.send("\(i)", to: "N"), 2) }
        XCTAssertEqual(members.map { log.count(for: $0.name) }, [2, 2, 2])
        XCTAssertEqual(log.count(for: "plain"), 6)
        XCTAssertEqual(center.queueGroups.count, 1)
        XCTAssertEqual(center.queueGroups["workers"]?.subscriptions, 3)
        XCTAssertEqual(center.queueGroups["workers"]?.turn, 6)
    }

    /// Clients that subscribe and unsubscribe with ever-new group names must not grow the center.
    func testChurnedGroupNamesLeaveNoEntryBehind() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let member = Probe("member")
        for i in 0..<10_000 {
            // Exact and wildcard subscriptions in turn.
            try center.add(member, to: i % 2 == 0 ? "N" : "*", group: "g\(i)")
            XCTAssertEqual(try center.send("\(i)", to: "N"), 1)
            XCTAssertEqual(center.queueGroups.count, 1)
            XCTAssertTrue(center.remove(member, from: i % 2 == 0 ? "N" : "*"))
        }
        XCTAssertEqual(member.received.count, 10_000)
        XCTAssertTrue(center.queueGroups.isEmpty)
    }

    /// Every way a subscription goes takes it out of its group: unsubscribe, removeAll, the number's removal, a
    /// released customer, and a subscription moved to another group (or out of any) by subscribing again.
    func testEveryWayOutLeavesTheGroup() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        try center.create("M")
        let a = Probe("a")
        let b = Probe("b")
        try center.add(a, to: "N", group: "g")
        try center.add(a, to: "M", group: "g")
        try center.add(b, to: "N", group: "g")
        try center.send("x", to: "N")
        XCTAssertEqual(center.queueGroups["g"]?.subscriptions, 3)

        center.removeAll(a)
        XCTAssertEqual(center.queueGroups["g"]?.subscriptions, 1)
        try center.remove("N")
        XCTAssertNil(center.queueGroups["g"], "the number's removal took the last subscription")

        try center.add(b, to: "M", group: "h")
        try center.add(b, to: "M", group: "i")
        XCTAssertNil(center.queueGroups["h"], "moved to another group")
        XCTAssertEqual(center.queueGroups["i"]?.subscriptions, 1)
        try center.add(b, to: "M", group: "i")
        XCTAssertEqual(center.queueGroups["i"]?.subscriptions, 1, "the same group again counts once")
        try center.add(b, to: "M")
        XCTAssertTrue(center.queueGroups.isEmpty, "moved out of any group")

        var released: Probe? = Probe("released")
        try center.add(released!, to: "M", group: "j")
        try center.add(released!, to: ">", group: "j")
        XCTAssertEqual(center.queueGroups["j"]?.subscriptions, 2)
        released = nil
        XCTAssertEqual(center.subscriptionCount, 1, "the released customer is pruned")
        XCTAssertTrue(center.queueGroups.isEmpty)
    }

    /// A member that unsubscribes the group's last other subscription during a send: the group is skipped, and
    /// no entry is made again for it.
    func testAGroupThatLeavesDuringASendIsSkipped() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let member = Probe("member")
        let plain = Probe("plain")
        plain.onReceive = { _, _, _ in center.removeAll(member) }
        try center.add(plain, to: "N")
        try center.add(member, to: "N", group: "g")
        XCTAssertEqual(try center.send("x", to: "N"), 1)
        XCTAssertTrue(member.received.isEmpty)
        XCTAssertTrue(center.queueGroups.isEmpty)
    }

    /// Group names are bytes: "café" in NFC and in NFD are two groups, each given the message.
    func testCanonicallyEquivalentGroupNamesAreTwoGroups() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let composed = Probe("composed")
        let decomposed = Probe("decomposed")
        try center.add(composed, to: "N", group: "caf\u{E9}")
        try center.add(decomposed, to: "N", group: "cafe\u{301}")
        XCTAssertEqual(center.queueGroups.count, 2)
        XCTAssertEqual(try center.send("x", to: "N"), 2)
        XCTAssertEqual(composed.received.count, 1)
        XCTAssertEqual(decomposed.received.count, 1)

        // Moving a subscription from one spelling to the other is a move, not the same group.
        try center.add(composed, to: "N", group: "cafe\u{301}")
        XCTAssertEqual(center.queueGroups.count, 1)
        XCTAssertEqual(center.queueGroups[NameKey("cafe\u{301}")]?.subscriptions, 2)
    }
}
