import XCTest

@testable import SubscriptionCenter

/// Sends to a part of the matching subscribers (the cluster bridge's two copies of another node's publication,
/// docs/CLUSTER.md step 3): `plainOnly` and `group(g)` together serve what one `everyone` send would, and a local
/// send reports the groups it met.
final class CenterAudienceTests: XCTestCase {
    private func send(
        _ center: SubscriptionCenter<String>, _ message: String, to number: String, from sender: String? = nil,
        _ audience: Audience
    ) throws -> (receivers: Int, groups: [String]) {
        var groups: [String] = []
        let receivers = try center.send(to: number, from: sender, audience: audience, groupsMet: &groups) { _ in message
        }
        return (receivers, groups)
    }

    func testPlainOnlyLeavesTheGroupsAndGroupServesOneMemberOfThatGroupOnly() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let log = DeliveryLog()
        let plain = Probe("plain", log: log)
        let workers = (0..<2).map { Probe("w\($0)", log: log) }
        let auditor = Probe("auditor", log: log)
        try center.add(plain, to: "N")
        for worker in workers { try center.add(worker, to: "N", group: "workers") }
        try center.add(auditor, to: "*", group: "audit")

        XCTAssertEqual(try send(center, "a", to: "N", .plainOnly).receivers, 1)
        XCTAssertEqual(log.entries.map(\.customer), ["plain"])
        XCTAssertEqual(try send(center, "b", to: "N", .group("workers")).receivers, 1)
        XCTAssertEqual(try send(center, "c", to: "N", .group("workers")).receivers, 1)
        XCTAssertEqual(log.entries.map(\.customer), ["plain", "w0", "w1"], "round-robin within the group alone")
        XCTAssertEqual(try send(center, "d", to: "N", .group("absent")).receivers, 0)
        XCTAssertEqual(try send(center, "e", to: "N", .group("audit")).receivers, 1)
        XCTAssertEqual(log.entries.last?.customer, "auditor")
        XCTAssertEqual(log.count(for: "plain"), 1, "a group's copy never reaches a plain subscriber")
    }

    /// A member that also has a plain subscription matching the message has it from the plain copy: the group's copy
    /// goes to another member, as one local send would choose, and a group whose every member has it is satisfied.
    func testAGroupCopyPassesOverAMemberThatIsAPlainSubscriberToo() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let log = DeliveryLog()
        let both = Probe("both", log: log)
        let other = Probe("other", log: log)
        try center.add(both, to: "N", group: "g")
        try center.add(both, to: ">")
        try center.add(other, to: "N", group: "g")
        for message in ["1", "2", "3"] { XCTAssertEqual(try send(center, message, to: "N", .group("g")).receivers, 1) }
        XCTAssertEqual(log.count(for: "both"), 0)
        XCTAssertEqual(log.count(for: "other"), 3)

        XCTAssertTrue(center.remove(other, from: "N"))
        XCTAssertEqual(try send(center, "4", to: "N", .group("g")).receivers, 0, "satisfied: its member has it")
        // A plain subscription whose from= filter does not pass leaves its customer to the group.
        try center.add(both, to: ">", from: "someone")
        XCTAssertEqual(try send(center, "5", to: "N", from: "lab", .group("g")).receivers, 1)
        XCTAssertEqual(log.count(for: "both"), 1)
    }

    func testEveryoneReportsTheGroupsItMet() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N.x")
        let a = Probe("a")
        let b = Probe("b")
        let c = Probe("c")
        let plain = Probe("plain")
        try center.add(a, to: "N.x", group: "g")
        try center.add(b, to: "N.*", group: "h")
        try center.add(c, to: "N.>", from: "someone", group: "filtered")
        try center.add(plain, to: "N.x")
        let sent = try send(center, "m", to: "N.x", from: "lab", .everyone)
        XCTAssertEqual(sent.receivers, 3)
        XCTAssertEqual(Set(sent.groups), ["g", "h"], "a member whose from= filter fails does not serve its group")
        XCTAssertEqual(try send(center, "m", to: "N.x", .plainOnly).groups.count, 2, "met, not served")
    }
}
