import SubscriptionWire
import XCTest

@testable import SubscriptionMQTT

/// The map between MQTT topics and filters and subd numbers and patterns, case by case: the escapes, the numbers
/// that have no topic, filters and their parents, shared subscriptions, the `$` rule, the length limit.
final class TopicMapTests: XCTestCase {
    /// Asserts that `topic` maps to `number` and back.
    private func assertMaps(_ topic: String, _ number: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(try MQTTTopicMap.number(forTopic: topic), number, file: file, line: line)
        XCTAssertEqual(MQTTTopicMap.topic(forNumber: number), topic, file: file, line: line)
    }

    func testTopicsAndTheirNumbers() {
        assertMaps("a", "a")
        assertMaps("a/b/c", "a.b.c")
        assertMaps("sensors/room 1/temp.c", "sensors.room%201.temp%2Ec")
        assertMaps("100%", "100%25")
        assertMaps("%2A", "%252A")
        assertMaps("tab\there", "tab%09here")
        assertMaps("\u{01}\u{1F}\u{7F}", "%01%1F%7F")
        assertMaps("é/€/𝄞", "é.€.𝄞")
        assertMaps("$SYS/broker", "$SYS.broker")
        // Empty levels.
        assertMaps("/", "%.%")
        assertMaps("a//b", "a.%.b")
        assertMaps("/a/", "%.a.%")
        // `*` and `>` as whole levels, and inside longer ones.
        assertMaps("*", "%2A")
        assertMaps(">", "%3E")
        assertMaps("a/*/>", "a.%2A.%3E")
        assertMaps("a*/>b/**", "a*.>b.**")
    }

    func testTopicsWithoutANumber() {
        for topic in ["", "a/+", "+", "#", "a/#/b", "a+"] {
            XCTAssertThrowsError(try MQTTTopicMap.number(forTopic: topic), topic) { error in
                XCTAssertEqual((error as? MQTTTopicError)?.reasonCode, topicNameInvalid)
            }
        }
        XCTAssertThrowsError(try MQTTTopicMap.number(forTopic: "a\u{0}b"))
    }

    func testTheLengthLimit() throws {
        let longest = String(repeating: "x", count: 200)
        XCTAssertEqual(try MQTTTopicMap.number(forTopic: longest), longest)
        XCTAssertThrowsError(try MQTTTopicMap.number(forTopic: longest + "x")) { error in
            XCTAssertEqual((error as? MQTTTopicError)?.reasonCode, topicNameInvalid)
            XCTAssertTrue("\(error)".contains("201 bytes"), "\(error)")
        }
        // Escapes count: 66 dots take 198 bytes, 67 take 201.
        XCTAssertEqual(try MQTTTopicMap.number(forTopic: String(repeating: ".", count: 66)).utf8.count, 198)
        XCTAssertThrowsError(try MQTTTopicMap.number(forTopic: String(repeating: ".", count: 67)))
        // 101 empty levels are 100 slashes: 201 bytes.
        XCTAssertEqual(try MQTTTopicMap.number(forTopic: String(repeating: "/", count: 99)).utf8.count, 199)
        XCTAssertThrowsError(try MQTTTopicMap.number(forTopic: String(repeating: "/", count: 100)))
        // Filters too.
        XCTAssertEqual(
            try MQTTTopicMap.patterns(forFilter: String(repeating: "+/", count: 99) + "#").pattern.count, 199)
        XCTAssertThrowsError(try MQTTTopicMap.patterns(forFilter: String(repeating: "+/", count: 100) + "#")) { error in
            XCTAssertEqual((error as? MQTTTopicError)?.reasonCode, topicFilterInvalid)
        }
    }

    func testNumbersWithoutATopic() {
        let noTopic = [
            // Not valid numbers.
            "", "a..b", ".a", "a b", "*", "a.>", String(repeating: "x", count: 201),
            // `%` alone is the empty level, but the empty topic is no topic name.
            "%",
            // Escapes the forward map never writes: lowercase, unknown, cut off, of kept bytes, of `/`, `+`, `#`.
            "%2a", "%3e", "a%2e", "%7f", "%41", "%2F", "%2B", "%23", "%00", "%80", "%FF", "%2", "a%", "%%", "%G0",
            "%%25", "a%2A", "%2Ab", "x%3E", "%2A%2A",
            // Wildcard characters a topic name may not have, and the level separator.
            "a+", "+", "#", "a.#", "a.b+c", "a/b", "/", "a.%.b/", "A/;",
        ]
        for number in noTopic {
            XCTAssertNil(MQTTTopicMap.topic(forNumber: number), number)
        }
    }

    func testFiltersAndTheirPatterns() throws {
        let cases: [(String, String, String?)] = [
            ("a", "a", nil), ("a/b", "a.b", nil), ("+", "*", nil), ("#", ">", nil), ("a/#", "a.>", "a"),
            ("+/#", "*.>", "*"), ("a/+/b", "a.*.b", nil), ("a/+/#", "a.*.>", "a.*"), ("a/*/b", "a.%2A.b", nil),
            ("a/>", "a.%3E", nil), ("/#", "%.>", "%"), ("//", "%.%.%", nil), ("+/+", "*.*", nil),
            ("room 1/#", "room%201.>", "room%201"), ("$SYS/#", "$SYS.>", "$SYS"), ("$share/g/a", "$share.g.a", nil),
        ]
        for (filter, pattern, parent) in cases {
            XCTAssertEqual(
                try MQTTTopicMap.patterns(forFilter: filter), MQTTFilterPatterns(pattern: pattern, parent: parent),
                filter)
            XCTAssertNoThrow(try Names.checkPattern(pattern))
        }
        for filter in MalformedSubscribeTests.invalidFilters where !filter.hasPrefix("$share/") {
            XCTAssertThrowsError(try MQTTTopicMap.patterns(forFilter: filter), filter) { error in
                XCTAssertEqual((error as? MQTTTopicError)?.reasonCode, topicFilterInvalid)
            }
        }
    }

    func testSharedSubscriptions() throws {
        XCTAssertTrue(try MQTTTopicMap.sharedSubscription("$share/g/a/b")! == ("g", "a/b"))
        XCTAssertTrue(try MQTTTopicMap.sharedSubscription("$share/group one/#")! == ("group one", "#"))
        XCTAssertTrue(try MQTTTopicMap.sharedSubscription("$share/g//")! == ("g", "/"))
        // The filter is not checked here.
        XCTAssertTrue(try MQTTTopicMap.sharedSubscription("$share/g/")! == ("g", ""))
        for filter in ["a/b", "$share", "$sharex/a", "$SHARE/g/a", "share/g/a", "#"] {
            XCTAssertNil(try MQTTTopicMap.sharedSubscription(filter), filter)
        }
        for filter in ["$share/", "$share//a", "$share/g", "$share/g+/a", "$share/#/a"] {
            XCTAssertThrowsError(try MQTTTopicMap.sharedSubscription(filter), filter) { error in
                XCTAssertEqual((error as? MQTTTopicError)?.reasonCode, topicFilterInvalid)
            }
        }
    }

    func testTheDollarRule() {
        for filter in ["+", "#", "+/a", "+/#", "#"] { XCTAssertTrue(MQTTTopicMap.excludesDollarTopics(filter), filter) }
        for filter in ["a", "a/#", "a/+", "$SYS/#", "$foo/+", "/#", ""] {
            XCTAssertFalse(MQTTTopicMap.excludesDollarTopics(filter), filter)
        }
    }

    func testErrorDescriptions() {
        XCTAssertEqual(
            MQTTTopicError(reasonCode: topicNameInvalid, message: "is empty").description,
            "topic name invalid: is empty")
        XCTAssertEqual(
            MQTTTopicError(reasonCode: topicFilterInvalid, message: "is empty").description,
            "topic filter invalid: is empty")
    }
}
