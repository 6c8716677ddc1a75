import SubscriptionCenter
import XCTest

/// The matching rules, checked on `Names.matches`, on a reference matcher and through the trie of a center.
final class WildcardTableTests: XCTestCase {
    static let table: [(pattern: String, number: String, matches: Bool)] = [
        (">", "A", true),
        (">", "A.B", true),
        (">", "A.B.C", true),
        ("*", "A", true),
        ("*", "A.B", false),
        ("A.>", "A", false),
        ("A.>", "A.B", true),
        ("A.>", "A.B.C", true),
        ("A.>", "B.A", false),
        ("A.*", "A", false),
        ("A.*", "A.B", true),
        ("A.*", "A.B.C", false),
        ("*.B", "A.B", true),
        ("*.B", "A.C", false),
        ("*.B", "B", false),
        ("*.*", "A.B", true),
        ("*.*", "A", false),
        ("*.>", "A", false),
        ("*.>", "A.B", true),
        ("*.>", "A.B.C", true),
        ("A.*.C", "A.B.C", true),
        ("A.*.C", "A.B.D", false),
        ("A.*.C", "A.C", false),
        ("A.B.>", "A.B", false),
        ("A.B.>", "A.B.C.D", true),
        ("*.*.>", "A.B", false),
        ("*.*.>", "A.B.C", true),
        ("A.B", "A.B", true),
        ("A.B", "A.BC", false),
        ("A.B", "A.B.C", false),
        ("AB", "A", false),
        ("A", "AB", false),
        ("a", "A", false),
        ("a*", "a*", true),
        ("a*", "ab", false),
        (">x", ">x", true),
        ("SCIENCE.*", "SCIENCE.physics", true),
        ("Ünï.*", "Ünï.cöde", true),
        ("Ünï.*", "Uni.code", false),
    ]

    func testNamesMatches() {
        for (pattern, number, expected) in Self.table {
            XCTAssertEqual(Names.matches(pattern: pattern, number: number), expected, "\(pattern) vs \(number)")
            XCTAssertEqual(referenceMatches(pattern: pattern, number: number), expected, "reference: \(pattern)")
        }
    }

    /// One fresh center per case: create the number, subscribe, send.
    func testEachCaseThroughTheCenter() throws {
        for (pattern, number, expected) in Self.table {
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
        let patterns = Array(Set(Self.table.map(\.pattern))).sorted()
        let numbers = Array(Set(Self.table.map(\.number) + ["X.Y.Z", "A.B.C.D.E"])).sorted()
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
        XCTAssertEqual(try center.list(matching: "A.*"),
                       [NumberInfo(number: "A.B", subscribers: 1), NumberInfo(number: "A.C", subscribers: 1)])
        XCTAssertEqual(try center.list(matching: "A.>").map(\.number), ["A.B", "A.B.C", "A.C"])
        XCTAssertEqual(try center.list(matching: "A"), [NumberInfo(number: "A", subscribers: 0)])
        XCTAssertEqual(try center.list(matching: "Z"), [])
        XCTAssertEqual(try center.list(matching: "*"), [NumberInfo(number: "A", subscribers: 0),
                                                      NumberInfo(number: "B", subscribers: 0)])
    }
}
