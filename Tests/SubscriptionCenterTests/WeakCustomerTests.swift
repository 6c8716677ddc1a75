import XCTest

@testable import SubscriptionCenter

final class WeakCustomerTests: XCTestCase {
    func testReleasedCustomerIsGoneEverywhere() throws {
        let center = SubscriptionCenter<String>()
        let log = DeliveryLog()
        try center.create("A.B")
        try center.create("C")
        let stays = Probe("stays", log: log)
        var leaves: Probe? = Probe("leaves", log: log)
        weak let watch = leaves
        try center.add(stays, to: "A.B")
        try center.add(leaves!, to: "A.B")
        try center.add(leaves!, to: "A.*")
        try center.add(leaves!, to: ">", from: "x")
        try center.add(leaves!, to: "C")
        XCTAssertEqual(center.subscriptionCount, 5)
        XCTAssertEqual(center.customerCount, 2)

        leaves = nil
        XCTAssertNil(watch, "the center must not keep a customer alive")
        XCTAssertEqual(center.subscriptionCount, 1)
        XCTAssertEqual(center.customerCount, 1)
        XCTAssertEqual(center.subscriberCount(of: "A.B"), 1)
        XCTAssertEqual(center.subscriberCount(of: "C"), 0)
        XCTAssertEqual(
            try center.list(),
            [NumberInfo(number: "A.B", subscribers: 1), NumberInfo(number: "C", subscribers: 0)])
        XCTAssertEqual(try center.send("m", to: "A.B", from: "x"), 1)
        XCTAssertEqual(try center.send("m", to: "C", from: "x"), 0)
        XCTAssertEqual(log.count(for: "leaves"), 0)
        XCTAssertEqual(log.count(for: "stays"), 1)
        XCTAssertEqual(center.trie.nodeCount, 0, "the dead customer's wildcard nodes are deleted")
        XCTAssertEqual(center.customers.count, 1)
    }

    /// Each observation prunes on its own: send alone, with nothing else looking first.
    func testSendAloneSkipsAndPrunesReleasedCustomer() throws {
        let center = SubscriptionCenter<String>()
        let log = DeliveryLog()
        try center.create("N")
        var gone: Probe? = Probe("gone", log: log)
        try center.add(gone!, to: "N")
        try center.add(gone!, to: "*")
        gone = nil
        XCTAssertEqual(try center.send("m", to: "N"), 0)
        XCTAssertEqual(log.entries.count, 0)
        XCTAssertTrue(center.customers.isEmpty)
        XCTAssertEqual(center.trie.count, 0)
        XCTAssertTrue(center.numbers["N"]!.subscribers.isEmpty)
    }

    func testRemovedNumberDoesNotReturnReleasedCustomers() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let alive = Probe("alive")
        var dead: Probe? = Probe("dead")
        try center.add(alive, to: "N")
        try center.add(dead!, to: "N")
        try center.add(dead!, to: "other.*")
        dead = nil
        let gone = try center.remove("N")
        XCTAssertEqual(gone.count, 1)
        XCTAssertTrue(gone.first === alive)
        XCTAssertEqual(center.trie.count, 0, "the dead customer's other subscriptions went with it")
    }

    /// A new customer may get the address (ObjectIdentifier) of a released one; it must start clean.
    func testNewCustomerAtAReusedAddressStartsClean() throws {
        let center = SubscriptionCenter<String>()
        let log = DeliveryLog()
        try center.create("OLD")
        try center.create("NEW")
        var old: Probe? = Probe("old", log: log)
        let oldID = ObjectIdentifier(old!)
        try center.add(old!, to: "OLD", from: "x")
        try center.add(old!, to: "OLD.*")
        old = nil

        // glibc malloc hands the freed block back at once in practice; keep trying a little to be sure.
        var keep: [Probe] = []
        var fresh = Probe("fresh", log: log)
        while ObjectIdentifier(fresh) != oldID && keep.count < 64 {
            keep.append(fresh)
            fresh = Probe("fresh", log: log)
        }
        let reused = ObjectIdentifier(fresh) == oldID
        XCTAssertEqual(center.subscriptions(of: fresh), [], "reused address: \(reused)")
        XCTAssertFalse(center.remove(fresh, from: "OLD"), "reused address: \(reused)")
        try center.add(fresh, to: "NEW")
        XCTAssertEqual(center.subscriptions(of: fresh), [SubscriptionInfo(pattern: "NEW")])
        XCTAssertEqual(try center.send("m", to: "OLD", from: "x"), 0)
        XCTAssertEqual(try center.send("m", to: "NEW"), 1)
        XCTAssertEqual(log.entries.map(\.number), ["NEW"])
        XCTAssertEqual(center.subscriptionCount, 1)
        XCTAssertEqual(center.customerCount, 1)
        XCTAssertEqual(center.subscriberCount(of: "OLD"), 0)
        XCTAssertEqual(center.trie.nodeCount, 0)
        // The limit counts only the fresh customer's own subscriptions.
        center.limits.maxSubscriptionsPerCustomer = 2
        try center.add(fresh, to: "OLD")
        XCTAssertEqual(center.subscriptions(of: fresh).map(\.pattern), ["NEW", "OLD"])
    }
}

/// A customer held ``CustomerRetention/untilRemoved``: the center keeps it until its last subscription is removed,
/// and then lets it go; it never dangles.
final class RetainedCustomerTests: XCTestCase {
    /// A probe that asks to be held until it is removed.
    final class RetainedProbe: Customer {
        typealias Message = String
        var received: [String] = []
        var retention: CustomerRetention { .untilRemoved }
        func receive(_ message: String, on number: String) -> Bool {
            received.append(message)
            return true
        }
        func numberRemoved(_ number: String) {}
    }

    func testTheCenterKeepsARetainedCustomerUntilItIsRemoved() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        var probe: RetainedProbe? = RetainedProbe()
        weak let watcher = probe
        try center.add(probe!, to: "N")
        try center.add(probe!, to: "M.*")
        probe = nil
        XCTAssertNotNil(watcher, "held by the center while it is subscribed")
        XCTAssertEqual(try center.send("still here", to: "N"), 1)
        XCTAssertEqual(watcher?.received, ["still here"])
        center.removeAll(watcher!)
        XCTAssertNil(watcher, "released with its last subscription")
        XCTAssertEqual(try center.send("gone", to: "N"), 0)
        XCTAssertEqual(center.customerCount, 0)
    }

    /// Regression: a cached wildcard match kept the subscriptions of a removed customer, and through them the
    /// customer, while no send looked that number up again (and none does once the trie is empty).
    func testARemovedCustomerIsNotKeptByACachedWildcardMatch() throws {
        let center = SubscriptionCenter<String>()
        try center.create("A.b")
        var probe: RetainedProbe? = RetainedProbe()
        weak let watcher = probe
        try center.add(probe!, to: "A.*")
        XCTAssertEqual(try center.send("m", to: "A.b"), 1, "the match is cached now")
        center.removeAll(probe!)
        probe = nil
        XCTAssertNil(watcher, "released with its last subscription, cached match or not")
        XCTAssertEqual(try center.send("m", to: "A.b"), 0)
    }

    func testUnsubscribingEveryPatternReleasesItToo() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        var probe: RetainedProbe? = RetainedProbe()
        weak let watcher = probe
        try center.add(probe!, to: "N")
        probe = nil
        center.remove(watcher!, from: "N")
        XCTAssertNil(watcher)
    }
}
