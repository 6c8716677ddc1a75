import SubscriptionCenter
import XCTest

/// At-most-once delivery, the `from` filter and the count of accepted messages.
final class DeliveryTests: XCTestCase {
    func testOneCallHoweverManySubscriptionsMatch() throws {
        let center = SubscriptionCenter<String>()
        try center.create("SCIENCE")
        try center.create("SCIENCE.physics")
        let probe = Probe("p")
        try center.add(probe, to: "SCIENCE.physics")
        try center.add(probe, to: "SCIENCE.*")
        try center.add(probe, to: "*.physics")
        try center.add(probe, to: "SCIENCE.>")
        try center.add(probe, to: ">")
        XCTAssertEqual(try center.send("m1", to: "SCIENCE.physics"), 1)
        XCTAssertEqual(probe.received.count, 1)
        XCTAssertEqual(center.subscriberCount(of: "SCIENCE.physics"), 1)
        XCTAssertEqual(try center.send("m2", to: "SCIENCE"), 1)
        XCTAssertEqual(probe.received.map(\.number), ["SCIENCE.physics", "SCIENCE"])
        XCTAssertEqual(probe.received.map(\.message), ["m1", "m2"])
    }

    func testSendToMissingNumberThrows() {
        let center = SubscriptionCenter<String>()
        XCTAssertThrowsError(try center.send("m", to: "NOPE")) { error in
            XCTAssertEqual(error as? CenterError, .notFound("NOPE"))
        }
        XCTAssertEqual(center.subscriberCount(of: "NOPE"), 0)
    }

    func testRefusedMessageIsNotCountedAndNotRetried() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let refuses = Probe("refuses", accepts: false)
        let takes = Probe("takes")
        try center.add(refuses, to: "N")
        try center.add(refuses, to: ">")
        try center.add(takes, to: "N")
        XCTAssertEqual(try center.send("m", to: "N"), 1)
        XCTAssertEqual(refuses.received.count, 1, "called once, not again through its other subscription")
        XCTAssertEqual(takes.received.count, 1)
    }

    func testFromFilter() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let filtered = Probe("filtered")
        try center.add(filtered, to: "N", from: "alice")
        XCTAssertEqual(try center.send("anonymous", to: "N"), 0)
        XCTAssertEqual(try center.send("bob", to: "N", from: "bob"), 0)
        XCTAssertEqual(try center.send("alice", to: "N", from: "alice"), 1)
        XCTAssertEqual(filtered.received.map(\.message), ["alice"])
        XCTAssertEqual(center.subscriberCount(of: "N"), 1, "subscriberCount ignores from filters")
    }

    func testFilteredWildcard() throws {
        let center = SubscriptionCenter<String>()
        try center.create("A.B")
        let probe = Probe("p")
        try center.add(probe, to: "A.*", from: "alice")
        XCTAssertEqual(try center.send("bob", to: "A.B", from: "bob"), 0)
        XCTAssertEqual(try center.send("alice", to: "A.B", from: "alice"), 1)
        XCTAssertEqual(probe.received.map(\.message), ["alice"])
    }

    func testUnfilteredSubscriptionDeliversWhenTheFilteredOneDoesNot() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let probe = Probe("p")
        try center.add(probe, to: "N", from: "alice")
        try center.add(probe, to: ">")
        XCTAssertEqual(try center.send("bob", to: "N", from: "bob"), 1)
        XCTAssertEqual(try center.send("alice", to: "N", from: "alice"), 1)
        XCTAssertEqual(try center.send("nobody", to: "N"), 1)
        XCTAssertEqual(probe.received.map(\.message), ["bob", "alice", "nobody"])
    }

    func testSubscribingAgainReplacesTheFilter() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let probe = Probe("p")
        try center.add(probe, to: "N", from: "alice")
        try center.add(probe, to: "N", from: "bob")
        try center.add(probe, to: "A.*", from: "alice")
        try center.add(probe, to: "A.*")
        XCTAssertEqual(
            center.subscriptions(of: probe),
            [SubscriptionInfo(pattern: "A.*", from: nil), SubscriptionInfo(pattern: "N", from: "bob")])
        XCTAssertEqual(center.subscriptionCount, 2)
        XCTAssertEqual(try center.send("alice", to: "N", from: "alice"), 0)
        XCTAssertEqual(try center.send("bob", to: "N", from: "bob"), 1)
        try center.add(probe, to: "N")
        XCTAssertEqual(try center.send("anyone", to: "N"), 1)
        XCTAssertEqual(probe.received.map(\.message), ["bob", "anyone"])
    }

    func testUnsubscribe() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let probe = Probe("p")
        try center.add(probe, to: "N")
        try center.add(probe, to: "N.*")
        XCTAssertTrue(center.remove(probe, from: "N"))
        XCTAssertFalse(center.remove(probe, from: "N"), "not subscribed any more")
        XCTAssertFalse(center.remove(probe, from: "UNKNOWN"))
        XCTAssertFalse(center.remove(probe, from: "N.>"))
        XCTAssertEqual(try center.send("m", to: "N"), 0)
        XCTAssertEqual(center.subscriptions(of: probe), [SubscriptionInfo(pattern: "N.*")])
        XCTAssertTrue(center.remove(probe, from: "N.*"))
        XCTAssertEqual(center.customerCount, 0)
    }

    func testRemoveAll() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let probe = Probe("p")
        let other = Probe("o")
        for pattern in ["N", "N.*", ">", "*"] { try center.add(probe, to: pattern) }
        try center.add(other, to: "N")
        center.removeAll(probe)
        XCTAssertEqual(center.subscriptions(of: probe), [])
        XCTAssertEqual(center.subscriptionCount, 1)
        XCTAssertEqual(center.customerCount, 1)
        XCTAssertEqual(try center.send("m", to: "N"), 1)
        XCTAssertEqual(probe.received.count, 0)
        center.removeAll(probe)  // nothing left: no effect
        XCTAssertEqual(center.subscriptionCount, 1)
    }

    func testObserverAlias() throws {
        let center = SubscriptionCenter<String>()
        let observer: Observer<String> = Probe("o")
        try center.add(observer, to: ">")
        XCTAssertEqual(center.subscriptions(of: observer), [SubscriptionInfo(pattern: ">")])
    }
}
