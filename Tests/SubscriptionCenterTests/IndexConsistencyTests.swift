import SubscriptionWire
import TestSupport
import XCTest

@testable import SubscriptionCenter

/// Random operations against a simple reference model; after every step both indexes must agree with it.
final class IndexConsistencyTests: XCTestCase {
    static let numberNames = ["A", "B", "A.B", "A.C", "A.B.C", "B.A", "C.D.E", "$SYS.A", "$SYS.A.B", "A.$SYS"]
    static let patternNames =
        numberNames + [">", "*", "A.*", "A.>", "*.B", "*.*", "*.>", "A.*.C", "B.>", "*.*.*", "$SYS.>", "$SYS.*"]
    static let senders: [String?] = [nil, "x", "y"]

    /// The obviously-correct model: plain sets and dictionaries, no weak references, no trie.
    struct Model {
        var numbers: Set<String> = []
        /// slot → pattern → from filter, for live customers only.
        var subscriptions: [Int: [String: String?]] = [:]

        func receivers(of number: String, from sender: String?) -> Set<Int> {
            Set(
                subscriptions.compactMap { slot, patterns in
                    patterns.contains { pattern, from in
                        referenceMatches(pattern: pattern, number: number) && (from == nil || from == sender)
                    } ? slot : nil
                })
        }

        func subscriberCount(of number: String) -> Int {
            guard numbers.contains(number) else { return 0 }
            return subscriptions.values.filter { patterns in
                patterns.keys.contains { referenceMatches(pattern: $0, number: number) }
            }.count
        }
    }

    func testRandomOperations() throws {
        for seed: UInt64 in [1, 2, 3, 42, 2024] {
            try run(seed: seed, steps: 1500)
        }
    }

    private func run(seed: UInt64, steps: Int) throws {
        var random = SeededGenerator(seed: seed)
        let center = SubscriptionCenter<String>(limits: .init(maxSubscriptionsPerCustomer: 8), matchCacheCapacity: 5)
        let log = DeliveryLog()
        var model = Model()
        var slots: [Probe?] = Array(repeating: nil, count: 6)

        for step in 0..<steps {
            let context = "seed \(seed) step \(step)"
            let slot = Int.random(in: 0..<slots.count, using: &random)
            let number = Self.numberNames.randomElement(using: &random)!
            let pattern = Self.patternNames.randomElement(using: &random)!
            let sender = Self.senders.randomElement(using: &random)!
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<10:
                XCTAssertEqual(try center.create(number), model.numbers.insert(number).inserted, context)
            case 10..<14:
                if model.numbers.remove(number) != nil {
                    let gone = try center.remove(number)
                    let expected = model.subscriptions.filter { $0.value[number] != nil }.map(\.key)
                    XCTAssertEqual(
                        Set(gone.map { ObjectIdentifier($0) }),
                        Set(expected.map { ObjectIdentifier(slots[$0]!) }), context)
                    XCTAssertEqual(gone.count, expected.count, context)
                    for slot in expected { model.subscriptions[slot]![number] = nil }
                    model.subscriptions = model.subscriptions.filter { !$0.value.isEmpty }
                } else {
                    XCTAssertThrowsError(try center.remove(number), context)
                }
            case 14..<50:
                guard let probe = slots[slot] else { fallthrough }
                let isExact = try !Names.checkPattern(pattern)
                let mine = model.subscriptions[slot] ?? [:]
                if isExact && !model.numbers.contains(pattern) {
                    XCTAssertThrowsError(try center.add(probe, to: pattern, from: sender), context) { error in
                        XCTAssertEqual(error as? CenterError, .notFound(pattern), context)
                    }
                } else if mine[pattern] == nil && mine.count >= 8 {
                    XCTAssertThrowsError(try center.add(probe, to: pattern, from: sender), context)
                } else {
                    try center.add(probe, to: pattern, from: sender)
                    model.subscriptions[slot, default: [:]][pattern] = sender
                }
            case 50..<62:
                guard let probe = slots[slot] else { fallthrough }
                let expected = model.subscriptions[slot]?.removeValue(forKey: pattern) != nil
                if model.subscriptions[slot]?.isEmpty == true { model.subscriptions[slot] = nil }
                XCTAssertEqual(center.remove(probe, from: pattern), expected, context)
            case 62..<65:
                guard let probe = slots[slot] else { fallthrough }
                center.removeAll(probe)
                model.subscriptions[slot] = nil
            case 65..<70:
                // Release the customer: the model forgets it, the center must notice by itself.
                slots[slot] = nil
                model.subscriptions[slot] = nil
            case 70..<78:
                if slots[slot] == nil {
                    slots[slot] = Probe("\(slot)", log: log, accepts: Bool.random(using: &random) || slot != 0)
                }
            default:
                log.entries = []
                if model.numbers.contains(number) {
                    let expected = model.receivers(of: number, from: sender)
                    let accepted = expected.filter { slots[$0]!.accepts }.count
                    XCTAssertEqual(try center.send("m", to: number, from: sender), accepted, context)
                    XCTAssertEqual(log.entries.map(\.customer).sorted(), expected.map { "\($0)" }.sorted(), context)
                } else {
                    XCTAssertThrowsError(try center.send("m", to: number, from: sender), context)
                }
            }
            check(center, against: model, slots: slots, context: context)
        }
    }

    private func check(_ center: SubscriptionCenter<String>, against model: Model, slots: [Probe?], context: String) {
        for (slot, probe) in slots.enumerated() {
            guard let probe else { continue }
            let expected = (model.subscriptions[slot] ?? [:]).map { SubscriptionInfo(pattern: $0.key, from: $0.value) }
                .sorted { $0.pattern < $1.pattern }
            XCTAssertEqual(center.subscriptions(of: probe), expected, "\(context) slot \(slot)")
        }
        for number in Self.numberNames {
            XCTAssertEqual(
                center.subscriberCount(of: number), model.subscriberCount(of: number),
                "\(context) \(number)")
            XCTAssertEqual(center.contains(number), model.numbers.contains(number), context)
        }
        XCTAssertEqual(center.numberCount, model.numbers.count, context)
        XCTAssertEqual(center.subscriptionCount, model.subscriptions.values.reduce(0) { $0 + $1.count }, context)
        XCTAssertEqual(center.customerCount, model.subscriptions.count, context)
        XCTAssertEqual(try center.list().map(\.number), model.numbers.filter { !Names.isSystem($0) }.sorted(), context)
        XCTAssertEqual(
            try center.list(matching: "$SYS.>").map(\.number),
            model.numbers.filter { $0.hasPrefix("$SYS.") }.sorted(), context)
        XCTAssertEqual(center.clientNumberCount, model.numbers.filter { !Names.isSystem($0) }.count, context)
        // The other half of the index: nothing dead or empty is left behind.
        XCTAssertEqual(center.customers.count, model.subscriptions.count, context)
        let wildcards = model.subscriptions.values.reduce(0) { total, patterns in
            total + patterns.keys.filter { $0.contains("*") || $0.contains(">") }.count
        }
        XCTAssertEqual(center.trie.count, wildcards, context)
        if wildcards == 0 { XCTAssertEqual(center.trie.nodeCount, 0, context) }
        let exact = center.numbers.values.reduce(0) { $0 + $1.subscribers.items.count }
        XCTAssertEqual(exact, model.subscriptions.values.reduce(0) { $0 + $1.count } - wildcards, context)
    }
}
