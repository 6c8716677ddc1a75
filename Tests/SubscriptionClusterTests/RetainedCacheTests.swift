import SubscriptionNATS
import SubscriptionWire
import XCTest

@testable import SubscriptionCluster

/// What a node knows of the cluster's retained numbers: which entries it delivers, and what its next write is.
final class RetainedCacheTests: XCTestCase {
    private func value(_ revision: UInt64, generation: UInt64 = 5, _ text: String = "v") -> RetainedCache.Value {
        RetainedCache.Value(
            generation: generation, revision: revision, sender: nil, info: [], payload: Array(text.utf8), origin: "n-1",
            counter: revision)
    }

    func testNewerEntriesOfTheCurrentGenerationAreDeliveredOnceAndTheNextWriteBuildsOnTheLatest() {
        var cache = RetainedCache()
        XCTAssertNil(cache.nextWrite("T"), "not a retained number of the cluster")
        XCTAssertNil(cache.numberCreated("T", generation: 5))
        XCTAssertEqual(cache.nextWrite("T"), .init(expectedSequence: 0, revision: 1, generation: 5))

        XCTAssertEqual(cache.stored("T", .init(sequence: 10, value: value(1))), value(1))
        XCTAssertNil(cache.stored("T", .init(sequence: 10, value: value(1))), "the watch's copy of an applied write")
        XCTAssertEqual(cache.stored("T", .init(sequence: 12, value: value(2))), value(2))
        XCTAssertNil(cache.stored("T", .init(sequence: 11, value: value(9))), "an older sequence")
        XCTAssertEqual(cache.nextWrite("T"), .init(expectedSequence: 12, revision: 3, generation: 5))
        XCTAssertEqual(cache.current("T"), value(2))

        // Once the center holds it, its bytes are not kept twice; its revision still counts.
        cache.delivered("T")
        XCTAssertEqual(cache.current("T")?.payload, [])
        XCTAssertEqual(cache.nextWrite("T"), .init(expectedSequence: 12, revision: 3, generation: 5))
        XCTAssertNil(cache.numberCreated("T", generation: 5), "the watch's copy of the create: nothing to apply again")
    }

    func testAValueOfAnotherGenerationIsNeverTheNumbersValue() {
        var cache = RetainedCache()
        // The value arrives before the create that it belongs to (two watches): kept, and applied at the create.
        XCTAssertNil(cache.stored("T", .init(sequence: 3, value: value(4, generation: 5))))
        XCTAssertEqual(cache.numberCreated("T", generation: 5), value(4, generation: 5))
        // Removed and created again: the old value is not the new number's, but the next write builds on its sequence.
        cache.numberRemoved("T")
        XCTAssertFalse(cache.isShared("T"))
        XCTAssertNil(cache.numberCreated("T", generation: 8))
        XCTAssertNil(cache.current("T"))
        XCTAssertEqual(cache.nextWrite("T"), .init(expectedSequence: 3, revision: 1, generation: 8))
        XCTAssertNil(
            cache.stored("T", .init(sequence: 4, value: value(5, generation: 5))), "a late write of the old one")
        XCTAssertEqual(cache.stored("T", .init(sequence: 6, value: value(1, generation: 8))), value(1, generation: 8))
        XCTAssertNil(cache.stored("T", .init(sequence: 7, value: nil)), "a delete marker")
        XCTAssertEqual(cache.nextWrite("T"), .init(expectedSequence: 7, revision: 1, generation: 8))
    }

    func testRetainedHeadersRoundTripAndOthersAreNotAValue() {
        let info = [InfoPair(key: "unit", value: "C")]
        let headers = BridgeHeaders.encodeRetained(
            origin: "n-1", counter: 7, sender: "lab", info: info, revision: 3, generation: 9)
        XCTAssertEqual(
            BridgeHeaders.decodeRetained(headers, payload: [1]),
            RetainedCache.Value(
                generation: 9, revision: 3, sender: "lab", info: info, payload: [1], origin: "n-1", counter: 7))
        var noRevision = BridgeHeaders.encode(origin: "n-1", counter: 7, sender: nil, info: [])
        XCTAssertNil(BridgeHeaders.decodeRetained(noRevision, payload: []))
        noRevision.append(BridgeHeaders.revision, "0")
        noRevision.append(BridgeHeaders.generation, "1")
        XCTAssertNil(BridgeHeaders.decodeRetained(noRevision, payload: []), "revisions start at 1")
        XCTAssertNil(BridgeHeaders.decodeRetained(nil, payload: []))
    }
}
