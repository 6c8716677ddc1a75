import XCTest

@testable import SubscriptionNotifications

/// `observe`: an AsyncStream per observer, bounded, ended by its task or its number.
final class HubStreamTests: XCTestCase {
    func testStreamGetsPostsInOrder() async throws {
        let hub = NotificationHub()
        try hub.create("CART.changes")
        let changes = try hub.observe("CART.changes")
        XCTAssertEqual(hub.observerCount(of: "CART.changes"), 1, "in place when observe returns")
        for (sender, text) in [("apple", "plus"), ("pear", "plus"), ("apple", "minus")] {
            XCTAssertEqual(try hub.post("CART.changes", from: sender, text: text), 1)
        }
        let notes = try await take(3, from: changes)
        XCTAssertEqual(
            notes.map(\.summary),
            ["CART.changes apple plus", "CART.changes pear plus", "CART.changes apple minus"])
    }

    func testCancellingTheReadingTaskRemovesTheObserver() async throws {
        let hub = NotificationHub()
        try hub.create("N")
        let stream = try hub.observe("N")
        let reader = Task {
            var count = 0
            for await _ in stream { count += 1 }
            return count
        }
        XCTAssertEqual(try hub.post("N"), 1)
        reader.cancel()
        _ = await reader.value
        await eventually("the observer to end") { hub.observerCount(of: "N") == 0 }
        XCTAssertEqual(try hub.post("N"), 0)
        XCTAssertEqual(hub.observerCount, 0)
    }

    func testDroppingTheStreamRemovesTheObserver() throws {
        let hub = NotificationHub()
        try hub.create("N")
        do {
            let stream = try hub.observe("N")
            XCTAssertEqual(hub.observerCount(of: "N"), 1)
            withExtendedLifetime(stream) {}
        }
        XCTAssertEqual(hub.observerCount(of: "N"), 0)
        XCTAssertEqual(try hub.post("N"), 0)
    }

    /// The buffer keeps the oldest: a post that finds it full is not delivered there, and not counted.
    func testFullBufferTakesNothingMoreAndIsNotCounted() async throws {
        let hub = NotificationHub()
        try hub.create("N")
        let stream = try hub.observe("N", bufferLimit: 2)
        XCTAssertEqual(try hub.post("N", text: "1"), 1)
        XCTAssertEqual(try hub.post("N", text: "2"), 1)
        XCTAssertEqual(try hub.post("N", text: "3"), 0, "full: not delivered, not counted")
        var iterator = stream.makeAsyncIterator()
        let first = await iterator.next()
        XCTAssertEqual(first?.text, "1")
        XCTAssertEqual(try hub.post("N", text: "4"), 1, "room again")
        var rest: [String] = []
        for _ in 0..<2 { rest.append(await iterator.next()?.text ?? "") }
        XCTAssertEqual(rest, ["2", "4"])
    }

    func testRemovingTheNumberFinishesTheStreamAfterWhatItHolds() async throws {
        let hub = NotificationHub()
        try hub.create("N")
        let exact = try hub.observe("N")
        let wildcard = try hub.observe(">")
        XCTAssertEqual(try hub.post("N", text: "last"), 2)
        XCTAssertEqual(try hub.remove("N"), 1, "the exact observer is told")
        let notes = try await all(exact)
        XCTAssertEqual(notes.map(\.summary), ["N - last"])
        XCTAssertEqual(hub.observerCount, 1, "the wildcard observer stays")
        withExtendedLifetime(wildcard) {}
    }

    func testDeallocatingTheHubFinishesItsStreams() async throws {
        var hub: NotificationHub? = NotificationHub()
        try hub!.create("N")
        try hub!.create("R", retained: true)
        let stream = try hub!.observe("N")
        let watch = try hub!.watch("R")
        try hub!.post("N", text: "before")
        hub = nil
        let notes = try await all(stream)
        XCTAssertEqual(notes.map(\.summary), ["N - before"])
        let changes = try await all(watch)
        XCTAssertEqual(changes, [])
    }

    /// As subd's SUB: the current values of the retained numbers a new observer's pattern matches come first.
    func testObserverGetsCurrentRetainedValuesFirst() async throws {
        let hub = NotificationHub()
        try hub.create("R.b", retained: true)
        try hub.create("R.a", retained: true)
        try hub.create("R.empty", retained: true)
        try hub.create("R.plain")
        try hub.post("R.a", from: "x", text: "a1")
        try hub.post("R.a", from: "y", text: "a2")
        try hub.post("R.b", from: "x", text: "b1")
        let every = try hub.observe("R.*")
        let fromX = try hub.observe("R.*", from: "x")
        XCTAssertEqual(try hub.post("R.plain", from: "x", text: "p"), 2)
        let notes = try await take(3, from: every)
        XCTAssertEqual(notes.map(\.summary), ["R.a y a2", "R.b x b1", "R.plain x p"])
        XCTAssertEqual(notes.map(\.revision), [2, 1, nil])
        let filtered = try await take(2, from: fromX)
        XCTAssertEqual(filtered.map(\.summary), ["R.b x b1", "R.plain x p"], "R.a's value is y's")

        let received = Received<String>()
        let token = try hub.addObserver(for: "R.a") { received.append($0.summary) }
        XCTAssertEqual(received.items, ["R.a y a2"], "a closure observer too, before addObserver returns")
        withExtendedLifetime(token) {}
    }
}
