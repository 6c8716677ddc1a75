import SubscriptionProtocol
import TestSupport
import XCTest

@testable import SubscriptionServer

/// The per-client cache of simple publications' topics: a hit is always the number (and the topic) that topic was
/// stored with, a topic never stored is never a hit, and a removal anywhere empties it.
final class MQTTTopicCacheTests: XCTestCase {
    func testHitsAreExactAndARemovalEmptiesIt() {
        var cache = MQTTTopicCache()
        XCTAssertNil(cache.number(of: Array("a/b".utf8)[...], removals: 0), "empty")
        var stored: [[UInt8]: String] = [:]
        var generator = SeededGenerator(seed: 7)
        for index in 0..<2_000 {
            let name = "t/\(index % 300)/\(Int.random(in: 0..<3, using: &generator))"
            let topic = Array(name.utf8)
            let number = "n.\(index % 300).\(topic.last!)"
            cache.insert(name, number: number, removals: 4)
            stored[topic] = number
            // Every topic asked for: a hit is the number stored last for it (a slot may have been taken over).
            for (known, expected) in stored.prefix(20) {
                if let found = cache.number(of: known[...], removals: 4) {
                    XCTAssertEqual(found.number, expected)
                    XCTAssertEqual(Array(found.topic.utf8), known, "the topic comes with its number")
                }
            }
            XCTAssertNil(cache.number(of: Array("never/\(index)".utf8)[...], removals: 4))
        }
        let topic = Array("fresh".utf8)
        cache.insert("fresh", number: "fresh", removals: 4)
        XCTAssertEqual(cache.number(of: topic[...], removals: 4)?.number, "fresh")
        XCTAssertNil(cache.number(of: topic[...], removals: 5), "a number was removed somewhere: start again")
        XCTAssertNil(cache.number(of: topic[...], removals: 4), "emptied")
    }

    /// A topic that differs from a stored one by one byte, or is a prefix of it, is not a hit.
    func testOnlyTheSameBytesHit() {
        var cache = MQTTTopicCache()
        cache.insert("abc", number: "abc", removals: 0)
        for other in ["abd", "ab", "abcd", "Abc", ""] {
            XCTAssertNil(cache.number(of: Array(other.utf8)[...], removals: 0), other)
        }
        let slice = Array("xxabcxx".utf8)[2..<5]
        XCTAssertEqual(cache.number(of: slice, removals: 0)?.number, "abc", "a slice in the middle of a buffer")
    }
}
