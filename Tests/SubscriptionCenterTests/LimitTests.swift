import SubscriptionCenter
import XCTest

final class LimitTests: XCTestCase {
    func testMaxNumbers() throws {
        let center = SubscriptionCenter<String>(limits: .init(maxNumbers: 2))
        try center.create("A")
        try center.create("B")
        XCTAssertThrowsError(try center.create("C")) { error in
            XCTAssertEqual(error as? CenterError, .limit("at most 2 numbers may exist"))
        }
        XCTAssertFalse(try center.create("A"), "an existing number is no new number")
        _ = try center.remove("A")
        XCTAssertTrue(try center.create("C"))
        XCTAssertEqual(center.numberCount, 2)
    }

    func testMaxSubscriptionsPerCustomer() throws {
        let center = SubscriptionCenter<String>(limits: .init(maxSubscriptionsPerCustomer: 2))
        try center.create("A")
        let probe = Probe("p")
        try center.add(probe, to: "A")
        try center.add(probe, to: "B.*")
        XCTAssertThrowsError(try center.add(probe, to: ">")) { error in
            XCTAssertEqual(error as? CenterError, .limit("at most 2 subscriptions per customer"))
        }
        XCTAssertNoThrow(try center.add(probe, to: "A", from: "x"), "replacing a filter adds nothing")
        XCTAssertEqual(
            center.subscriptions(of: probe),
            [SubscriptionInfo(pattern: "A", from: "x"), SubscriptionInfo(pattern: "B.*")])

        let other = Probe("o")
        XCTAssertNoThrow(try center.add(other, to: ">"), "the limit is per customer")
        XCTAssertTrue(center.remove(probe, from: "B.*"))
        XCTAssertNoThrow(try center.add(probe, to: ">"))
        XCTAssertEqual(center.subscriptionCount, 3)
    }

    func testZeroMeansNone() throws {
        let center = SubscriptionCenter<String>(limits: .init(maxSubscriptionsPerCustomer: 0, maxNumbers: 0))
        XCTAssertThrowsError(try center.create("A"))
        XCTAssertThrowsError(try center.add(Probe("p"), to: ">"))
        XCTAssertEqual(center.customerCount, 0, "a refused customer leaves no record")
    }

    func testLoweringALimitKeepsWhatExists() throws {
        let center = SubscriptionCenter<String>()
        try center.create("A")
        try center.create("B")
        center.limits = .init(maxSubscriptionsPerCustomer: 1, maxNumbers: 1)
        XCTAssertEqual(center.numberCount, 2)
        XCTAssertThrowsError(try center.create("C"))
        let probe = Probe("p")
        try center.add(probe, to: "A")
        XCTAssertThrowsError(try center.add(probe, to: "B"))
        XCTAssertEqual(try center.send("m", to: "A"), 1)
    }
}
