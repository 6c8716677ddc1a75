import SubscriptionCenter
import SubscriptionWire
import TestSupport
import XCTest

/// The matching rules (TestSupport's `wildcardTable`, checked on the wire's matcher in SubscriptionWireTests),
/// through the trie of a center.
final class WildcardTableTests: XCTestCase {
    /// One fresh center per case: create the number, subscribe, send.
    func testEachCaseThroughTheCenter() throws {
        for (pattern, number, expected) in wildcardTable {
            let center = SubscriptionCenter<String>()
            let probe = Probe("p")
            try center.create(number)
            if try !Names.checkPattern(pattern) { try center.create(pattern) }
            try center.add(probe, to: pattern)
            XCTAssertEqual(try center.send("m", to: number), expected ? 1 : 0, "\(pattern) vs \(number)")
            XCTAssertEqual(probe.received.count, expected ? 1 : 0, "\(pattern) vs \(number)")
            XCTAssertEqual(center.subscriberCount(of: number), expected ? 1 : 0, "\(pattern) vs \(number)")
        }
    }

    /// Every pattern in one trie (nodes shared between patterns), every number sent to.
    func testAllPatternsInOneTrie() throws {
        let center = SubscriptionCenter<String>()
        let log = DeliveryLog()
        let patterns = Array(Set(wildcardTable.map(\.pattern))).sorted()
        let numbers = Array(Set(wildcardTable.map(\.number) + ["X.Y.Z", "A.B.C.D.E"])).sorted()
        for number in numbers { try center.create(number) }
        var probes: [Probe] = []
        for pattern in patterns {
            let probe = Probe(pattern, log: log)
            probes.append(probe)
            if try !Names.checkPattern(pattern) && !center.contains(pattern) { try center.create(pattern) }
            try center.add(probe, to: pattern)
        }
        for number in numbers {
            log.entries = []
            let expected = Set(patterns.filter { referenceMatches(pattern: $0, number: number) })
            XCTAssertEqual(try center.send(number, to: number), expected.count, number)
            XCTAssertEqual(Set(log.entries.map(\.customer)), expected, number)
            XCTAssertEqual(log.entries.count, expected.count, "\(number): one call per customer")
            XCTAssertEqual(center.subscriberCount(of: number), expected.count, number)
        }
    }

    func testListMatchingPatterns() throws {
        let center = SubscriptionCenter<String>()
        for number in ["B", "A.C", "A.B", "A", "A.B.C"] { try center.create(number) }
        let p = Probe("p")
        try center.add(p, to: "A.*")
        XCTAssertEqual(try center.list().map(\.number), ["A", "A.B", "A.B.C", "A.C", "B"])
        XCTAssertEqual(
            try center.list(matching: "A.*"),
            [NumberInfo(number: "A.B", subscribers: 1), NumberInfo(number: "A.C", subscribers: 1)])
        XCTAssertEqual(try center.list(matching: "A.>").map(\.number), ["A.B", "A.B.C", "A.C"])
        XCTAssertEqual(try center.list(matching: "A"), [NumberInfo(number: "A", subscribers: 0)])
        XCTAssertEqual(try center.list(matching: "Z"), [])
        XCTAssertEqual(
            try center.list(matching: "*"),
            [
                NumberInfo(number: "A", subscribers: 0),
                NumberInfo(number: "B", subscribers: 0),
            ])
    }
}
