import SubscriptionCenter
import XCTest

/// Creating and removing numbers: exact subscribers are told GONE, wildcard subscriptions survive.
final class NumberLifecycleTests: XCTestCase {
    func testCreate() throws {
        let center = SubscriptionCenter<String>()
        XCTAssertTrue(try center.create("SCIENCE"))
        XCTAssertFalse(try center.create("SCIENCE"), "exists already")
        XCTAssertTrue(center.contains("SCIENCE"))
        XCTAssertFalse(center.contains("science"), "numbers are case-sensitive")
        XCTAssertEqual(center.numberCount, 1)
    }

    func testExactSubscriptionNeedsTheNumberButAWildcardDoesNot() throws {
        let center = SubscriptionCenter<String>()
        let probe = Probe("p")
        XCTAssertThrowsError(try center.add(probe, to: "SCIENCE")) { error in
            XCTAssertEqual(error as? CenterError, .notFound("SCIENCE"))
        }
        XCTAssertNoThrow(try center.add(probe, to: "SCIENCE.*"))
        XCTAssertNoThrow(try center.add(probe, to: ">"))
        XCTAssertEqual(center.subscriptions(of: probe).map(\.pattern), [">", "SCIENCE.*"])
    }

    func testRemoveReturnsExactSubscribersAndKeepsWildcards() throws {
        let center = SubscriptionCenter<String>()
        try center.create("SCIENCE")
        try center.create("OTHER")
        let exact = Probe("exact")
        let both = Probe("both")
        let wildcard = Probe("wildcard")
        let elsewhere = Probe("elsewhere")
        try center.add(exact, to: "SCIENCE")
        try center.add(both, to: "SCIENCE", from: "x")
        try center.add(both, to: "*")
        try center.add(wildcard, to: ">")
        try center.add(elsewhere, to: "OTHER")

        let gone = try center.remove("SCIENCE")
        XCTAssertEqual(Set(gone.map { ObjectIdentifier($0) }), [ObjectIdentifier(exact), ObjectIdentifier(both)])
        XCTAssertEqual(exact.removedNumbers, ["SCIENCE"], "told through the Customer requirement (GONE)")
        XCTAssertEqual(both.removedNumbers, ["SCIENCE"])
        XCTAssertEqual(wildcard.removedNumbers, [], "a wildcard subscription stays and is not told")
        XCTAssertEqual(elsewhere.removedNumbers, [])
        XCTAssertFalse(center.contains("SCIENCE"))
        XCTAssertEqual(center.subscriptions(of: exact), [])
        XCTAssertEqual(center.subscriptions(of: both), [SubscriptionInfo(pattern: "*")])
        XCTAssertEqual(center.subscriptions(of: wildcard), [SubscriptionInfo(pattern: ">")])
        XCTAssertEqual(center.customerCount, 3, "exact had nothing left")
        XCTAssertEqual(center.subscriptionCount, 3)
        XCTAssertThrowsError(try center.send("m", to: "SCIENCE")) { error in
            XCTAssertEqual(error as? CenterError, .notFound("SCIENCE"))
        }

        // Made again: the wildcard subscribers get it, the old exact ones do not.
        try center.create("SCIENCE")
        XCTAssertEqual(center.subscriberCount(of: "SCIENCE"), 2)
        XCTAssertEqual(try center.send("again", to: "SCIENCE"), 2)
        XCTAssertEqual(exact.received.count, 0)
        XCTAssertEqual(both.received.map(\.message), ["again"])
        XCTAssertEqual(wildcard.received.map(\.message), ["again"])
    }

    func testRemoveMissingNumberThrows() {
        let center = SubscriptionCenter<String>()
        XCTAssertThrowsError(try center.remove("NOPE")) { error in
            XCTAssertEqual(error as? CenterError, .notFound("NOPE"))
        }
    }

    func testTheDaemonsOwnNumbersAreNotCountedNorListedByGreaterThan() throws {
        let center = SubscriptionCenter<String>(limits: .init(maxNumbers: 1))
        XCTAssertTrue(try center.create("$SYS.stats"))
        XCTAssertTrue(try center.create("$SYS.client.connected"), "the daemon's numbers are outside max_numbers")
        XCTAssertTrue(try center.create("A"))
        XCTAssertThrowsError(try center.create("B"), "one client number is the limit")
        XCTAssertEqual(center.numberCount, 3)
        XCTAssertEqual(center.clientNumberCount, 1)
        XCTAssertEqual(try center.list().map(\.number), ["A"], "> does not list them")
        XCTAssertEqual(try center.list(matching: "*.stats").map(\.number), [])
        XCTAssertEqual(try center.list(matching: "$SYS.>").map(\.number), ["$SYS.client.connected", "$SYS.stats"])
        try center.remove("$SYS.stats")
        XCTAssertEqual(center.clientNumberCount, 1)
        try center.remove("A")
        XCTAssertTrue(try center.create("B"))
    }
}
