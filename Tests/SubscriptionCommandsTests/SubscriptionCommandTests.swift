import SubscriptionCenter
import SubscriptionCommands
import SubscriptionProtocol
import SubscriptionWire
import XCTest

/// `SUB` and `UNSUB`: the center's subscription, the current values pushed before the `+OK`, `max_pending`.
final class SubscriptionCommandTests: XCTestCase {
    func testSubscribePushesTheMatchingCurrentValuesInByteOrder() throws {
        var harness = Harness()
        for number in ["B", "A", "C"] { try harness.center.create(number, retained: number != "C") }
        _ = harness.run("PUB B 1\nb")
        _ = harness.run("PUB A 1\na")
        XCTAssertEqual(harness.run("SUB >"), .success(.ok()))
        XCTAssertEqual(harness.environment.pushed.map(\.number), ["A", "B"])
        XCTAssertEqual(harness.center.subscriptions(of: harness.environment.customer).map(\.pattern), [">"])
    }

    func testSubscribeKeepsItsFilterAndGroup() throws {
        var harness = Harness()
        try harness.center.create("SCIENCE")
        XCTAssertEqual(harness.run("SUB SCIENCE from=lab group=workers"), .success(.ok()))
        let subscription = harness.center.subscription(of: harness.environment.customer, to: "SCIENCE")
        XCTAssertEqual(subscription?.from, "lab")
        XCTAssertEqual(subscription?.group, "workers")
    }

    func testValuesThatWouldPassMaxPendingAreLimitAndSubscribeNothing() throws {
        var harness = Harness()
        try harness.center.create("SCIENCE", retained: true)
        _ = harness.run("PUB SCIENCE 4\nV1.0")
        harness.environment.maxPending = 100
        harness.environment.queuedBytes = 90
        XCTAssertEqual(Harness.code(harness.run("SUB SCIENCE")), .limit)
        XCTAssertTrue(harness.center.subscriptions(of: harness.environment.customer).isEmpty)
        XCTAssertTrue(harness.environment.pushed.isEmpty)
    }

    func testSubscribingToAMissingNumberIsNotFound() {
        var harness = Harness()
        XCTAssertEqual(Harness.code(harness.run("SUB NOWHERE")), .notFound)
        XCTAssertEqual(harness.run("SUB NOWHERE.>"), .success(.ok()), "a pattern needs no number yet")
    }

    func testUnsubscribeIsOkWhetherOrNotTheClientWasSubscribed() throws {
        var harness = Harness()
        try harness.center.create("SCIENCE")
        _ = harness.run("SUB SCIENCE")
        XCTAssertEqual(harness.run("UNSUB SCIENCE"), .success(.ok()))
        XCTAssertTrue(harness.center.subscriptions(of: harness.environment.customer).isEmpty)
        XCTAssertEqual(harness.run("UNSUB SCIENCE"), .success(.ok()))
    }
}
