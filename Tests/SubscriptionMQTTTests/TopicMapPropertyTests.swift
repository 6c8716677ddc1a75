import SubscriptionWire
import TestSupport
import XCTest

@testable import SubscriptionMQTT

/// The topic map over many generated topics, numbers and filters: one-to-one both ways, and a filter's patterns
/// matching (through subd's matcher) exactly the numbers of the topics MQTT's matching rules say it matches.
final class TopicMapPropertyTests: XCTestCase {
    /// Pieces of topic levels: the escaped bytes, UTF-8, `*` and `>`, and escapes spelled out.
    private let levelPieces = [
        "a", "Z", "0", ".", "%", " ", "\t", "\u{01}", "\u{1F}", "\u{7F}", "*", ">", "é", "€", "𝄞", "$", "%2A",
        "%25", "-", "_", "~",
    ]

    /// A random topic name: 1 to 8 levels, some empty, some exactly `*` or `>`.
    private func randomTopic(_ generator: inout SeededGenerator) -> String {
        let levels = (0..<Int.random(in: 1...8, using: &generator)).map { _ -> String in
            switch Int.random(in: 0..<10, using: &generator) {
            case 0: return ""
            case 1: return "*"
            case 2: return ">"
            default:
                return (0..<Int.random(in: 1...5, using: &generator)).map { _ in
                    levelPieces.randomElement(using: &generator)!
                }.joined()
            }
        }
        return levels.joined(separator: "/")
    }

    func testEveryTopicMapsToANumberAndBack() throws {
        var generator = SeededGenerator(seed: 42)
        var mapped = 0
        for _ in 0..<5000 {
            let topic = randomTopic(&generator)
            guard !topic.isEmpty else { continue }
            let number: String
            do {
                number = try MQTTTopicMap.number(forTopic: topic)
            } catch {
                // The only reason a generated topic has no number: its number would be too long.
                XCTAssertTrue(error.message.contains("bytes long"), "\(topic.debugDescription): \(error)")
                continue
            }
            mapped += 1
            XCTAssertNoThrow(try Names.checkNumber(number), number)
            XCTAssertEqual(MQTTTopicMap.topic(forNumber: number), topic, number)
        }
        XCTAssertGreaterThan(mapped, 4000)
    }

    func testEveryNumberWithATopicMapsBack() throws {
        let tokenPieces = [
            "a", "%", "%2A", "%3E", "%25", "%2E", "%20", "%01", "%1F", "%7F", "%7f", "%2a", "%41", "%2", "+", "#",
            "*", ">", "é", "2A", "3E", "x", "$", "/",
        ]
        var generator = SeededGenerator(seed: 7)
        var withTopic = 0
        var without = 0
        for _ in 0..<5000 {
            let tokens = (0..<Int.random(in: 1...5, using: &generator)).map { _ in
                (0..<Int.random(in: 1...3, using: &generator)).map { _ in tokenPieces.randomElement(using: &generator)!
                }
                .joined()
            }
            let number = tokens.joined(separator: ".")
            guard let topic = MQTTTopicMap.topic(forNumber: number) else {
                without += 1
                continue
            }
            withTopic += 1
            XCTAssertEqual(try MQTTTopicMap.number(forTopic: topic), number, topic.debugDescription)
        }
        XCTAssertGreaterThan(withTopic, 500)
        XCTAssertGreaterThan(without, 500)
    }

    /// Whether MQTT's `filter` matches `topic` (section 4.7), the `$` rule included.
    private func mqttMatches(filter: String, topic: String) -> Bool {
        if topic.hasPrefix("$") && (filter.hasPrefix("+") || filter.hasPrefix("#")) { return false }
        let filterLevels = filter.split(separator: "/", omittingEmptySubsequences: false)
        let topicLevels = topic.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in filterLevels.enumerated() {
            if level == "#" { return true }
            guard index < topicLevels.count, level == "+" || level == topicLevels[index] else { return false }
        }
        return filterLevels.count == topicLevels.count
    }

    func testPatternsMatchWhatTheFilterMatches() throws {
        var generator = SeededGenerator(seed: 99)
        let topicLevels = ["a", "b", "", "$x", "$SYS", "*", ">"]
        let filterLevels = ["a", "b", "", "+", "$x", "$SYS", "*"]
        func random(_ levels: [String], count: ClosedRange<Int>) -> [String] {
            (0..<Int.random(in: count, using: &generator)).map { _ in levels.randomElement(using: &generator)! }
        }
        let topics = Set((0..<200).map { _ in random(topicLevels, count: 1...4).joined(separator: "/") })
            .filter { !$0.isEmpty }
        let filters = Set(
            (0..<200).map { _ in
                var levels = random(filterLevels, count: 0...3)
                if levels.isEmpty || Bool.random(using: &generator) { levels.append("#") }
                return levels.joined(separator: "/")
            }
        ).filter { !$0.isEmpty }
        let numbers = try topics.map { ($0, try MQTTTopicMap.number(forTopic: $0)) }
        var matches = 0
        for filter in filters {
            let patterns = try MQTTTopicMap.patterns(forFilter: filter)
            let excludesDollar = MQTTTopicMap.excludesDollarTopics(filter)
            for (topic, number) in numbers {
                var subd =
                    Names.matches(pattern: patterns.pattern, number: number)
                    || patterns.parent.map { Names.matches(pattern: $0, number: number) } ?? false
                if excludesDollar && number.hasPrefix("$") { subd = false }
                let mqtt = mqttMatches(filter: filter, topic: topic)
                XCTAssertEqual(subd, mqtt, "filter \(filter.debugDescription), topic \(topic.debugDescription)")
                if mqtt { matches += 1 }
            }
        }
        XCTAssertGreaterThan(matches, 300)
    }
}
