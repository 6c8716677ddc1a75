import SubscriptionNATS
import XCTest

@testable import SubscriptionCluster

/// One NATS queue subscription per (pattern, group) a node's sessions hold; the groups the publishing node served
/// travel in `Subd-Groups`; a group gets each publication once on a node however many of its patterns NATS picked.
final class GroupInterestTests: XCTestCase {
    private let workers = GroupInterest.Key(pattern: "JOBS.>", group: "workers")

    func testTheFirstMemberSubscribesAndTheLastEndsTheQueueSubscription() {
        var interest = GroupInterest()
        XCTAssertTrue(interest.add(workers))
        interest.subscribed(workers, sid: 7)
        XCTAssertFalse(interest.add(workers), "a second member costs NATS nothing")
        let other = GroupInterest.Key(pattern: "JOBS.>", group: "audit")
        XCTAssertTrue(interest.add(other), "another group on the same pattern is another queue")
        interest.subscribed(other, sid: 8)
        XCTAssertNil(interest.remove(workers))
        XCTAssertEqual(interest.remove(workers), 7, "the last member ends the queue subscription")
        XCTAssertNil(interest.remove(workers), "a key not held changes nothing")
        XCTAssertEqual(interest.holders, [other: 1])
    }

    /// A subscribe the client refused leaves the key held without a subscription: its next holder and the next
    /// connect try again (``GroupInterest/unsubscribed``), and its last holder has nothing to end.
    func testAKeyWhoseSubscribeFailedIsTriedAgain() {
        var interest = GroupInterest()
        XCTAssertTrue(interest.add(workers))
        XCTAssertEqual(interest.unsubscribed, [workers])
        XCTAssertTrue(interest.add(workers), "the next holder tries again")
        interest.subscribed(workers, sid: 3)
        XCTAssertEqual(interest.unsubscribed, [])
        XCTAssertNil(interest.remove(workers))
        XCTAssertEqual(interest.remove(workers), 3)

        XCTAssertTrue(interest.add(workers))
        XCTAssertNil(interest.remove(workers), "never subscribed: nothing to end")
        XCTAssertTrue(interest.holders.isEmpty)
    }

    func testAGroupAcceptsEachPublicationOnceWhileItIsHeld() {
        var interest = GroupInterest()
        XCTAssertFalse(interest.accept(origin: "n1", counter: 1, group: "workers"), "a group not held")
        _ = interest.add(workers)
        let narrower = GroupInterest.Key(pattern: "JOBS.a", group: "workers")
        _ = interest.add(narrower)
        XCTAssertTrue(interest.accept(origin: "n1", counter: 1, group: "workers"))
        XCTAssertFalse(interest.accept(origin: "n1", counter: 1, group: "workers"), "the copy of the other pattern")
        XCTAssertTrue(interest.accept(origin: "n2", counter: 1, group: "workers"), "another origin")
        XCTAssertTrue(
            interest.accept(origin: "n1", counter: 5, group: "workers"), "copies given to other nodes skipped")
        _ = interest.remove(workers)
        XCTAssertFalse(interest.accept(origin: "n1", counter: 5, group: "workers"), "kept while a key holds the group")
        _ = interest.remove(narrower)
        _ = interest.add(workers)
        XCTAssertTrue(
            interest.accept(origin: "n1", counter: 1, group: "workers"), "forgotten with the group's last key")
    }

    func testServedGroupsTravelInOneHeaderAndAreComparedByBytes() throws {
        let headers = BridgeHeaders.encode(
            origin: "n", counter: 1, sender: nil, info: [], groups: ["workers", "caf\u{E9}"])
        XCTAssertEqual(headers["Subd-Groups"], "workers caf\u{E9}")
        XCTAssertTrue(BridgeHeaders.served("workers", in: headers))
        XCTAssertTrue(BridgeHeaders.served("caf\u{E9}", in: headers))
        XCTAssertFalse(BridgeHeaders.served("cafe\u{301}", in: headers), "canonically equivalent is another group")
        XCTAssertFalse(BridgeHeaders.served("work", in: headers))
        XCTAssertFalse(
            BridgeHeaders.served("workers", in: BridgeHeaders.encode(origin: "n", counter: 2, sender: nil, info: [])))
        XCTAssertEqual(
            BridgeHeaders.encode(origin: "n", counter: 1, sender: nil, info: []).fields.map(\.name), ["Subd-Id"],
            "no header without a group served")
        XCTAssertNotNil(BridgeHeaders.decode(headers))
    }

    /// Keys compare by bytes: the same group name in NFC and NFD is two NATS queues.
    func testKeysCompareByBytes() {
        let composed = GroupInterest.Key(pattern: "N", group: "caf\u{E9}")
        let decomposed = GroupInterest.Key(pattern: "N", group: "cafe\u{301}")
        XCTAssertNotEqual(composed, decomposed)
        XCTAssertEqual(Set([composed, decomposed, composed]).count, 2)
    }
}
