import XCTest

@testable import SubscriptionCluster

/// One upstream subscription per distinct pattern: the first holder subscribes, the last one to go unsubscribes.
final class UpstreamInterestTests: XCTestCase {
    func testTheFirstHolderSubscribesAndTheLastUnsubscribes() {
        var interest = UpstreamInterest()
        XCTAssertEqual(interest.add("SCIENCE.>"), .subscribe)
        XCTAssertEqual(interest.add("SCIENCE.>"), .none, "the thousandth subscriber costs NATS nothing")
        XCTAssertEqual(interest.add("SCIENCE.physics"), .subscribe, "another pattern, even an overlapping one")
        XCTAssertEqual(interest.remove("SCIENCE.>"), .none)
        XCTAssertEqual(interest.remove("SCIENCE.>"), .unsubscribe)
        XCTAssertEqual(interest.holders, ["SCIENCE.physics": 1])
    }

    func testRemovingAPatternNotHeldChangesNothing() {
        var interest = UpstreamInterest()
        XCTAssertEqual(interest.remove("N"), .none)
        XCTAssertEqual(interest.add("N"), .subscribe)
        XCTAssertEqual(interest.remove("N"), .unsubscribe)
        XCTAssertEqual(interest.remove("N"), .none)
        XCTAssertTrue(interest.holders.isEmpty)
    }

    /// Patterns are told apart by their bytes, as NATS tells subjects apart: "café" in NFC and in NFD are two
    /// patterns, each with its own upstream subscription.
    func testCanonicallyEquivalentSpellingsAreTwoPatterns() {
        var interest = UpstreamInterest()
        let composed = "caf\u{E9}.>"
        let decomposed = "cafe\u{301}.>"
        XCTAssertEqual(composed, decomposed, "equal as Swift Strings")
        XCTAssertEqual(interest.add(composed), .subscribe)
        XCTAssertEqual(interest.add(decomposed), .subscribe, "another pattern for NATS")
        XCTAssertEqual(interest.remove(composed), .unsubscribe)
        XCTAssertEqual(interest.remove(decomposed), .unsubscribe)
    }
}
