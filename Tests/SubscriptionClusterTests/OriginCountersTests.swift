import XCTest

@testable import SubscriptionCluster

/// The dedupe of copies that overlapping upstream subscriptions bring: per origin, a counter not above the last
/// accepted one is a copy.
final class OriginCountersTests: XCTestCase {
    func testACopyOfAnAcceptedPublicationIsDroppedPerOrigin() {
        var origins = OriginCounters()
        XCTAssertTrue(origins.accept(origin: "a-1", counter: 1))
        XCTAssertFalse(origins.accept(origin: "a-1", counter: 1), "the second subscription's copy")
        XCTAssertTrue(origins.accept(origin: "b-1", counter: 1), "another origin's counter is its own")
        XCTAssertTrue(origins.accept(origin: "a-1", counter: 2))
        XCTAssertTrue(origins.accept(origin: "a-1", counter: 5), "counters may skip (publications nobody here wanted)")
        XCTAssertFalse(origins.accept(origin: "a-1", counter: 4))
    }

    /// Batches of several origins interleaved, copies among them: the same answers as a plain per-origin table.
    func testInterleavedOriginsAnswerAsATable() {
        var origins = OriginCounters()
        var table: [String: UInt64] = [:]
        var generator = SystemRandomNumberGenerator()
        var next: [String: UInt64] = ["a-1": 1, "b-1": 1, "c-1": 1]
        for _ in 0..<5_000 {
            let origin = ["a-1", "b-1", "c-1"].randomElement(using: &generator)!
            let run = Int.random(in: 1...20, using: &generator)
            for _ in 0..<run {
                // Mostly the next counter; sometimes a copy of one seen, sometimes a skip.
                let counter: UInt64
                switch Int.random(in: 0..<10, using: &generator) {
                case 0:
                    // Saturating: a counter below 1 would be an underflow (a trap), not a copy.
                    let back = UInt64.random(in: 1...3, using: &generator)
                    counter = next[origin]! > back ? next[origin]! - back : 1
                case 1: counter = next[origin]! + UInt64.random(in: 1...3, using: &generator)
                default: counter = next[origin]!
                }
                let expected = counter > (table[origin] ?? 0)
                if expected { table[origin] = counter }
                next[origin] = max(next[origin]!, counter + 1)
                XCTAssertEqual(origins.accept(origin: origin, counter: counter), expected, "\(origin) \(counter)")
            }
        }
    }
}
