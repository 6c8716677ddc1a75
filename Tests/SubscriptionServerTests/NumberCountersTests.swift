import SubscriptionWire
import XCTest

@testable import SubscriptionServer

/// The per-number publish counts behind the metrics' busiest numbers: counted only while enabled, bounded, and
/// forgetting removed numbers.
final class NumberCountersTests: XCTestCase {
    func testCountsAndRanksBusiestFirst() {
        var counters = NumberCounters(enabled: true)
        for (number, times) in [("A", 3), ("B", 5), ("C", 1), ("D", 3)] {
            for _ in 0..<times { counters.published(to: number) }
        }
        XCTAssertEqual(counters.busiest(3).map(\.number), ["B", "A", "D"], "ties go to the number first by bytes")
        XCTAssertEqual(counters.busiest(3).map(\.published), [5, 3, 3])
        XCTAssertEqual(counters.busiest(10).count, 4)
        XCTAssertTrue(counters.busiest(0).isEmpty)
    }

    func testDisabledCountsNothing() {
        var counters = NumberCounters(enabled: false)
        counters.published(to: "A")
        XCTAssertTrue(counters.counts.isEmpty)
        counters.setEnabled(true)
        counters.published(to: "A")
        XCTAssertEqual(counters.counts, ["A": 1])
        counters.setEnabled(false)
        XCTAssertTrue(counters.counts.isEmpty, "stopping forgets")
    }

    func testForgetsRemovedNumbers() {
        var counters = NumberCounters(enabled: true)
        for number in ["A", "B", "C"] { counters.published(to: number) }
        counters.forget { $0 == "B" }
        XCTAssertEqual(Set(counters.counts.keys), ["A", "C"])
    }

    /// Numbers are bytes: "café" in NFC and in NFD are two numbers (the center's two), counted apart, shown apart
    /// and forgotten apart, never merged as Swift's String equality would.
    func testCanonicallyEquivalentSpellingsAreCountedSeparately() {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        var counters = NumberCounters(enabled: true)
        for _ in 0..<3 { counters.published(to: composed) }
        counters.published(to: decomposed)
        XCTAssertEqual(counters.counts.count, 2)
        XCTAssertEqual(counters.counts[ExactName(composed)], 3)
        XCTAssertEqual(counters.counts[ExactName(decomposed)], 1)
        let busiest = counters.busiest(10)
        XCTAssertEqual(busiest.map { Array($0.number.utf8) }, [Array(composed.utf8), Array(decomposed.utf8)])
        XCTAssertEqual(busiest.map(\.published), [3, 1])

        counters.forget { $0.utf8.elementsEqual(decomposed.utf8) }
        XCTAssertEqual(counters.counts, [ExactName(composed): 3])
    }

    /// Regression guard for the bound: many numbers published once each never hold more than the capacity, and
    /// the busy numbers survive every halving.
    func testMemoryIsBoundedAndTheBusiestSurvive() {
        var counters = NumberCounters(enabled: true, capacity: 64)
        for round in 0..<10_000 {
            counters.published(to: "busy.\(round % 3)")
            counters.published(to: "once.\(round)")
            XCTAssertLessThanOrEqual(counters.counts.count, 64)
        }
        XCTAssertEqual(counters.busiest(3).map(\.number), ["busy.0", "busy.1", "busy.2"])
        XCTAssertEqual(counters.busiest(1).first?.published, 3_334)
    }
}
