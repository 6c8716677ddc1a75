import SubscriptionWire
import XCTest

@testable import SubscriptionNotifications

/// Retained numbers: their value with its revision, and watches with old and new values (KVO).
final class HubRetainedTests: XCTestCase {
    typealias Value = NotificationHub.RetainedValue
    typealias Change = NotificationHub.Change

    func testValueHasTheLatestPostAndItsRevision() throws {
        let hub = NotificationHub()
        try hub.create("PRICE", retained: true)
        XCTAssertNil(try hub.value(of: "PRICE"), "nothing posted yet")
        XCTAssertEqual(try hub.post("PRICE", text: "11"), 0)
        let info = [InfoPair(key: "unit", value: "EUR")]
        try hub.post("PRICE", from: "shop", info: info, text: "12.5")
        let value = try hub.value(of: "PRICE")
        XCTAssertEqual(
            value, Value(number: "PRICE", payload: Array("12.5".utf8), revision: 2, from: "shop", info: info))
        XCTAssertEqual(value?.text, "12.5")
        XCTAssertEqual(value?.info, ["unit": "EUR"])
    }

    func testValueAndWatchRefuseWhatIsNoRetainedNumber() throws {
        let hub = NotificationHub()
        try hub.create("PLAIN")
        XCTAssertThrowsError(try hub.value(of: "PLAIN")) { XCTAssertEqual($0 as? HubError, .notRetained("PLAIN")) }
        XCTAssertThrowsError(try hub.watch("PLAIN")) { XCTAssertEqual($0 as? HubError, .notRetained("PLAIN")) }
        XCTAssertThrowsError(try hub.value(of: "NONE")) { XCTAssertEqual($0 as? HubError, .notFound("NONE")) }
        XCTAssertThrowsError(try hub.watch("NONE")) { XCTAssertEqual($0 as? HubError, .notFound("NONE")) }
        XCTAssertEqual(hub.observerCount, 0)
    }

    func testPostsToARetainedNumberCarryTheirRevision() async throws {
        let hub = NotificationHub()
        try hub.create("R", retained: true)
        try hub.post("R", text: "1")
        let stream = try hub.observe("R")
        try hub.post("R", text: "2")
        let notes = try await take(2, from: stream)
        XCTAssertEqual(notes.map(\.revision), [1, 2], "the current value first, then the post")
    }

    func testWatchReportsTheInitialValueThenOldAndNew() async throws {
        let hub = NotificationHub()
        try hub.create("CART.count", retained: true)
        try hub.post("CART.count", from: "controller", text: "1")
        let watch = try hub.watch("CART.count")
        XCTAssertEqual(watch.startRevision, 1)
        XCTAssertEqual(try hub.post("CART.count", text: "2"), 1, "a watch counts as an observer")
        try hub.post("CART.count", text: "1")
        let changes = try await take(3, from: watch)
        func value(_ text: String, _ revision: Int, from: String? = nil) -> Value {
            Value(number: "CART.count", payload: Array(text.utf8), revision: revision, from: from)
        }
        XCTAssertEqual(
            changes,
            [
                Change(old: nil, new: value("1", 1, from: "controller"), isInitial: true),
                Change(old: value("1", 1, from: "controller"), new: value("2", 2)),
                Change(old: value("2", 2), new: value("1", 3)),
            ])
    }

    func testWatchOfANumberWithNoValueStartsWithTheFirstPost() async throws {
        let hub = NotificationHub()
        try hub.create("R", retained: true)
        let watch = try hub.watch("R")
        XCTAssertEqual(watch.startRevision, 0)
        try hub.post("R", text: "first")
        let changes = try await take(1, from: watch)
        XCTAssertEqual(changes.first?.old, nil)
        XCTAssertEqual(changes.first?.new.text, "first")
        XCTAssertEqual(changes.first?.isInitial, false)
        XCTAssertEqual(changes.first?.missed, 0)
    }

    /// A watcher more than its buffer behind loses the oldest values, never the latest, and is told what it missed.
    func testWatchThatFellBehindKeepsTheLatestAndReportsWhatItMissed() async throws {
        let hub = NotificationHub()
        try hub.create("R", retained: true)
        try hub.post("R", text: "1")
        let watch = try hub.watch("R", bufferLimit: 2)
        for revision in 2...6 { XCTAssertEqual(try hub.post("R", text: "\(revision)"), 1) }
        var iterator = watch.makeAsyncIterator()
        let first = await iterator.next()
        XCTAssertEqual(first?.old, nil)
        XCTAssertEqual(first?.new.text, "5")
        XCTAssertEqual(first?.isInitial, false)
        XCTAssertEqual(first?.missed, 3, "revisions 2, 3 and 4")
        let second = await iterator.next()
        XCTAssertEqual(second?.old?.text, "5")
        XCTAssertEqual(second?.new.text, "6")
        XCTAssertEqual(second?.missed, 0)
        try hub.post("R", text: "7")
        try hub.post("R", text: "8")
        try hub.post("R", text: "9")
        let third = await iterator.next()
        XCTAssertEqual(third.map { [$0.old?.revision, $0.new.revision, $0.missed] }, [6, 8, 1])
    }

    func testWatchEndsWhenTheNumberIsRemoved() async throws {
        let hub = NotificationHub()
        try hub.create("R", retained: true)
        try hub.post("R", text: "1")
        let watch = try hub.watch("R")
        XCTAssertEqual(try hub.remove("R"), 1)
        let changes = try await all(watch)
        XCTAssertEqual(changes.map(\.new.text), ["1"])
        XCTAssertEqual(hub.observerCount, 0)
    }

    func testDroppingTheWatchEndsTheObserver() throws {
        let hub = NotificationHub()
        try hub.create("R", retained: true)
        do {
            let watch = try hub.watch("R")
            XCTAssertEqual(hub.observerCount(of: "R"), 1)
            withExtendedLifetime(watch) {}
        }
        XCTAssertEqual(hub.observerCount(of: "R"), 0)
    }
}
