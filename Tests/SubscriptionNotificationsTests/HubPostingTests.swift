import SubscriptionWire
import XCTest

@testable import SubscriptionNotifications

/// Numbers, posts and what reaches whom: counts, the `from` filter, wildcards, queue groups, the rules.
final class HubPostingTests: XCTestCase {
    func testPostReturnsHowManyObserversGotIt() throws {
        let hub = NotificationHub()
        XCTAssertTrue(try hub.create("CART.changes"))
        XCTAssertEqual(try hub.post("CART.changes", text: "plus"), 0)
        let received = Received<String>()
        let tokens = try (0..<3).map { index in
            try hub.addObserver(for: "CART.changes") { note in received.append("\(index) \(note.text ?? "")") }
        }
        XCTAssertEqual(hub.observerCount(of: "CART.changes"), 3)
        XCTAssertEqual(try hub.post("CART.changes", text: "plus"), 3)
        XCTAssertEqual(received.items.sorted(), ["0 plus", "1 plus", "2 plus"])
        withExtendedLifetime(tokens) {}
    }

    func testNotificationCarriesNumberSenderInfoAndPayload() throws {
        let hub = NotificationHub()
        try hub.create("CART.changes")
        let received = Received<NotificationHub.Notification>()
        let token = try hub.addObserver(for: "CART.changes") { received.append($0) }
        let info = [InfoPair(key: "price", value: "3"), InfoPair(key: "unit", value: "EUR")]
        XCTAssertEqual(try hub.post("CART.changes", from: "apple", info: info, payload: [0, 1, 255]), 1)
        XCTAssertEqual(
            received.items,
            [NotificationHub.Notification(number: "CART.changes", payload: [0, 1, 255], from: "apple", info: info)])
        XCTAssertEqual(received.items.first?.info, ["price": "3", "unit": "EUR"])
        XCTAssertNil(received.items.first?.revision, "a plain number's posts have no revision")
        XCTAssertNil(received.items.first?.text, "not UTF-8")
        withExtendedLifetime(token) {}
    }

    func testFromFilterPassesOnlyThatSender() throws {
        let hub = NotificationHub()
        try hub.create("CART.changes")
        let apples = Received<String>()
        let token = try hub.addObserver(for: "CART.changes", from: "apple") { apples.append($0.summary) }
        XCTAssertEqual(try hub.post("CART.changes", from: "apple", text: "plus"), 1)
        XCTAssertEqual(try hub.post("CART.changes", from: "pear", text: "plus"), 0)
        XCTAssertEqual(try hub.post("CART.changes", text: "plus"), 0, "no sender is not 'apple'")
        XCTAssertEqual(hub.observerCount(of: "CART.changes"), 1, "counts ignore from filters, as LIST does")
        XCTAssertEqual(apples.items, ["CART.changes apple plus"])
        withExtendedLifetime(token) {}
    }

    func testWildcardPatterns() throws {
        let hub = NotificationHub()
        for number in ["CART.a", "CART.a.b", "SHOP"] { try hub.create(number) }
        let star = Received<String>()
        let tail = Received<String>()
        let every = Received<String>()
        let tokens = [
            try hub.addObserver(for: "CART.*") { star.append($0.number) },
            try hub.addObserver(for: "CART.>") { tail.append($0.number) },
            try hub.addObserver(for: ">") { every.append($0.number) },
        ]
        XCTAssertEqual(try hub.post("CART.a"), 3)
        XCTAssertEqual(try hub.post("CART.a.b"), 2)
        XCTAssertEqual(try hub.post("SHOP"), 1)
        XCTAssertEqual(star.items, ["CART.a"])
        XCTAssertEqual(tail.items, ["CART.a", "CART.a.b"])
        XCTAssertEqual(every.items, ["CART.a", "CART.a.b", "SHOP"])
        XCTAssertEqual(hub.observerCount(of: "CART.a.b"), 2)
        withExtendedLifetime(tokens) {}
    }

    func testWildcardObserverNeedsNoNumberYet() throws {
        let hub = NotificationHub()
        let received = Received<String>()
        let token = try hub.addObserver(for: "LATER.>") { received.append($0.number) }
        try hub.create("LATER.x")
        XCTAssertEqual(try hub.post("LATER.x"), 1)
        XCTAssertEqual(received.items, ["LATER.x"])
        withExtendedLifetime(token) {}
    }

    func testQueueGroupSharesPostsInTurn() throws {
        let hub = NotificationHub()
        try hub.create("JOBS")
        let first = Received<NotificationHub.Notification>()
        let second = Received<NotificationHub.Notification>()
        let plain = Received<NotificationHub.Notification>()
        let tokens = [
            try hub.addObserver(for: "JOBS", group: "workers") { first.append($0) },
            try hub.addObserver(for: "JOBS", group: "workers") { second.append($0) },
            try hub.addObserver(for: "JOBS") { plain.append($0) },
        ]
        for index in 0..<4 { XCTAssertEqual(try hub.post("JOBS", text: "job \(index)"), 2) }
        XCTAssertEqual(first.count, 2)
        XCTAssertEqual(second.count, 2)
        XCTAssertEqual(plain.count, 4)
        XCTAssertEqual(Set((first.items + second.items).compactMap(\.text)), ["job 0", "job 1", "job 2", "job 3"])
        XCTAssertEqual(Set((first.items + second.items).map(\.group)), ["workers"])
        XCTAssertEqual(Set(plain.items.map(\.group)), [nil])
        withExtendedLifetime(tokens) {}
    }

    func testCreateContainsAndRemove() throws {
        let hub = NotificationHub()
        XCTAssertFalse(hub.contains("N"))
        XCTAssertTrue(try hub.create("N"))
        XCTAssertFalse(try hub.create("N", retained: true), "an existing number keeps its kind")
        XCTAssertThrowsError(try hub.value(of: "N")) { XCTAssertEqual($0 as? HubError, .notRetained("N")) }
        XCTAssertTrue(hub.contains("N"))
        XCTAssertEqual(try hub.remove("N"), 0)
        XCTAssertFalse(hub.contains("N"))
        XCTAssertThrowsError(try hub.remove("N")) { XCTAssertEqual($0 as? HubError, .notFound("N")) }
        XCTAssertThrowsError(try hub.post("N")) { XCTAssertEqual($0 as? HubError, .notFound("N")) }
        XCTAssertThrowsError(try hub.observe("N")) { XCTAssertEqual($0 as? HubError, .notFound("N")) }
        XCTAssertEqual(hub.observerCount, 0, "a refused observer is not left behind")
    }

    func testTheWireRulesAreChecked() throws {
        let hub = NotificationHub()
        try hub.create("N")
        func refused(_ expected: HubError, _ call: () throws -> Void, line: UInt = #line) {
            XCTAssertThrowsError(try call(), line: line) { XCTAssertEqual($0 as? HubError, expected, line: line) }
        }
        refused(.invalidName("A..B", .emptyToken)) { try hub.create("A..B") }
        refused(.invalidName("A.*", .wildcardInNumber)) { try hub.post("A.*") }
        refused(.invalidName("A.>.B", .fullWildcardNotLast)) { _ = try hub.observe("A.>.B") }
        refused(.invalidName("A B", .forbiddenByte(0x20))) { _ = try hub.watch("A B") }
        refused(.invalidSender("a b", .forbiddenByte(0x20))) { try hub.post("N", from: "a b") }
        refused(.invalidSender("", .empty)) { _ = try hub.addObserver(for: "N", from: "") { _ in } }
        refused(.invalidGroup("", .empty)) { _ = try hub.observe("N", group: "") }
        refused(.invalidInfo(.reservedKey("from"))) { try hub.post("N", info: [InfoPair(key: "from", value: "x")]) }
        refused(.invalidInfo(.badValue)) { try hub.post("N", info: [InfoPair(key: "note", value: "a b")]) }
        refused(.invalidBufferLimit(0)) { _ = try hub.observe("N", bufferLimit: 0) }
        XCTAssertEqual(hub.observerCount, 0)
        XCTAssertEqual(
            HubError.notFound("N").description, "no such number: N (create it first)")
    }
}
