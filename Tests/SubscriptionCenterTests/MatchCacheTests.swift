import XCTest

@testable import SubscriptionCenter

/// The trie's match cache: invalidated on every trie change, bounded, and never used without wildcards.
final class MatchCacheTests: XCTestCase {
    func testNoWildcardNeverTouchesTrieOrCache() throws {
        let center = SubscriptionCenter<String>()
        try center.create("A.B")
        let probe = Probe("p")
        try center.add(probe, to: "A.B")
        for _ in 0..<10 { try center.send("m", to: "A.B") }
        XCTAssertEqual(center.subscriberCount(of: "A.B"), 1)
        XCTAssertEqual(center.trie.walks, 0)
        XCTAssertEqual(center.matchCache.count, 0)
        XCTAssertEqual(probe.received.count, 10)
    }

    func testWildcardAddedAfterACachedSendIsSeen() throws {
        let center = SubscriptionCenter<String>()
        try center.create("A.B")
        let first = Probe("first")
        try center.add(first, to: "A.*")
        XCTAssertEqual(try center.send("1", to: "A.B"), 1)
        XCTAssertEqual(try center.send("2", to: "A.B"), 1)
        XCTAssertEqual(center.trie.walks, 1, "the second send is served from the cache")

        let late = Probe("late")
        try center.add(late, to: "*.B")
        XCTAssertEqual(try center.send("3", to: "A.B"), 2)
        XCTAssertEqual(late.received.map(\.message), ["3"])
        XCTAssertEqual(center.trie.walks, 2)

        XCTAssertTrue(center.remove(first, from: "A.*"))
        XCTAssertEqual(try center.send("4", to: "A.B"), 1)
        XCTAssertEqual(first.received.map(\.message), ["1", "2", "3"])

        center.removeAll(late)
        XCTAssertEqual(try center.send("5", to: "A.B"), 0)
        XCTAssertEqual(late.received.map(\.message), ["3", "4"])
    }

    func testFilterChangeOnACachedWildcardIsSeen() throws {
        let center = SubscriptionCenter<String>()
        try center.create("A.B")
        let probe = Probe("p")
        try center.add(probe, to: "A.>")
        XCTAssertEqual(try center.send("1", to: "A.B", from: "bob"), 1)
        try center.add(probe, to: "A.>", from: "alice")
        XCTAssertEqual(try center.send("2", to: "A.B", from: "bob"), 0)
        XCTAssertEqual(try center.send("3", to: "A.B", from: "alice"), 1)
    }

    func testCacheIsBounded() throws {
        let center = SubscriptionCenter<String>(matchCacheCapacity: 4)
        let probe = Probe("p")
        try center.add(probe, to: ">")
        for index in 0..<10 { try center.create("N\(index)") }
        for round in 0..<2 {
            for index in 0..<10 {
                XCTAssertEqual(try center.send("m", to: "N\(index)"), 1, "round \(round), N\(index)")
                XCTAssertLessThanOrEqual(center.matchCache.count, 4)
            }
        }
        XCTAssertEqual(probe.received.count, 20)
    }

    func testEmptyTrieNodesAreDeleted() throws {
        let center = SubscriptionCenter<String>()
        let a = Probe("a")
        let b = Probe("b")
        try center.create("X.Y")
        try center.add(a, to: "X.*.Z")
        try center.add(b, to: "X.*.>")
        try center.add(b, to: "X.Y")
        XCTAssertEqual(center.trie.nodeCount, 3)  // X, *, Z
        XCTAssertTrue(center.remove(a, from: "X.*.Z"))
        XCTAssertEqual(center.trie.nodeCount, 2)  // X, * (holds the `>` list of b)
        center.removeAll(b)
        XCTAssertEqual(center.trie.nodeCount, 0)
        XCTAssertEqual(center.trie.count, 0)
        XCTAssertTrue(center.customers.isEmpty)
    }
}
