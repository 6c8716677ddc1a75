import Dispatch
import XCTest

@testable import SubscriptionNotifications

/// Closure observers: tokens, weak observers, queues, removal, and code that calls the hub from inside a handler.
final class HubObserverTests: XCTestCase {
    func testReleasingTheTokenRemovesTheObserver() throws {
        let hub = NotificationHub()
        try hub.create("N")
        let received = Received<String>()
        var token: ObservationToken? = try hub.addObserver(for: "N") { received.append($0.text ?? "") }
        XCTAssertEqual(try hub.post("N", text: "one"), 1)
        XCTAssertEqual(hub.observerCount(of: "N"), 1)
        XCTAssertNotNil(token)
        token = nil
        XCTAssertEqual(hub.observerCount(of: "N"), 0)
        XCTAssertEqual(hub.observerCount, 0)
        XCTAssertEqual(try hub.post("N", text: "two"), 0)
        XCTAssertEqual(received.items, ["one"])
    }

    func testCancelEndsTheObserverOnceAndForAll() throws {
        let hub = NotificationHub()
        try hub.create("N")
        let received = Received<String>()
        let token = try hub.addObserver(for: "N") { received.append($0.text ?? "") }
        token.cancel()
        token.cancel()
        XCTAssertEqual(try hub.post("N", text: "after"), 0)
        XCTAssertEqual(hub.observerCount, 0)
        XCTAssertEqual(received.count, 0)
    }

    func testWeakObserverGoesWhenDeallocated() throws {
        let hub = NotificationHub()
        try hub.create("CART.changes")
        var watcher: Watcher? = Watcher("controller")
        try hub.addObserver(watcher!, for: "CART.changes") { watcher, note in
            watcher.received.append("\(watcher.name) \(note.text ?? "")")
        }
        weak let gone = watcher
        XCTAssertEqual(try hub.post("CART.changes", text: "plus"), 1)
        XCTAssertEqual(watcher?.received.items, ["controller plus"])
        XCTAssertEqual(hub.observerCount(of: "CART.changes"), 1)

        watcher = nil
        XCTAssertNil(gone, "the hub must not keep a weak observer alive")
        XCTAssertEqual(hub.observerCount(of: "CART.changes"), 0, "a deallocated observer is never counted")
        XCTAssertEqual(hub.observerCount, 0)
        XCTAssertEqual(try hub.post("CART.changes", text: "plus"), 0)
    }

    /// A post is the first to meet the deallocated observer: it is not counted, and it is gone after.
    func testPostAloneSkipsAndDropsAGoneWeakObserver() throws {
        let hub = NotificationHub()
        try hub.create("N")
        var watcher: Watcher? = Watcher("w")
        try hub.addObserver(watcher!, for: "N") { watcher, _ in watcher.received.append("x") }
        try hub.addObserver(watcher!, for: ">") { watcher, _ in watcher.received.append("y") }
        watcher = nil
        XCTAssertEqual(try hub.post("N"), 0)
        XCTAssertEqual(hub.observerCount, 0)
    }

    /// Weak observers that go without any post or count reaching them are swept as new ones come.
    func testGoneWeakObserversDoNotPileUp() throws {
        let hub = NotificationHub()
        try hub.create("QUIET")
        for _ in 0..<1000 {
            try hub.addObserver(Watcher("short-lived"), for: "QUIET") { _, _ in }
        }
        let left = hub.locked { state in state.subscribers.count }
        XCTAssertLessThanOrEqual(left, 64, "swept while they were added")
        XCTAssertEqual(hub.observerCount, 0)
    }

    func testHandlerRunsOnItsQueueInPostOrder() throws {
        let hub = NotificationHub()
        try hub.create("N")
        let queue = DispatchQueue(label: "observer")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let received = Received<String>()
        let done = expectation(description: "three notifications on the queue")
        done.expectedFulfillmentCount = 3
        let token = try hub.addObserver(for: "N", queue: queue) { note in
            received.append("\(note.text ?? "") \(DispatchQueue.getSpecific(key: key) == true)")
            done.fulfill()
        }
        for index in 1...3 { XCTAssertEqual(try hub.post("N", text: "\(index)"), 1) }
        wait(for: [done], timeout: 10)
        XCTAssertEqual(received.items, ["1 true", "2 true", "3 true"])
        withExtendedLifetime(token) {}
    }

    func testCancelledQueueObserverIsNotStartedAgain() throws {
        let hub = NotificationHub()
        try hub.create("N")
        let queue = DispatchQueue(label: "observer")
        let received = Received<String>()
        let gate = DispatchSemaphore(value: 0)
        queue.async { gate.wait() }  // holds the queue: what the post hands over waits behind it
        let token = try hub.addObserver(for: "N", queue: queue) { received.append($0.text ?? "") }
        XCTAssertEqual(try hub.post("N", text: "queued"), 1)
        token.cancel()
        gate.signal()
        queue.sync {}
        XCTAssertEqual(received.count, 0, "cancelled before it ran: never started")
    }

    func testWhenRemovedTellsExactObserversAndEndsThem() throws {
        let hub = NotificationHub()
        try hub.create("JOB.1")
        let exact = Received<String>()
        let wildcard = Received<String>()
        var watcher: Watcher? = Watcher("w")
        let tokens = [
            try hub.addObserver(
                for: "JOB.1", using: { exact.append($0.text ?? "") }, whenRemoved: { exact.append("removed \($0)") }),
            try hub.addObserver(for: "JOB.*", using: { _ in }, whenRemoved: { wildcard.append("removed \($0)") }),
        ]
        try hub.addObserver(
            watcher!, for: "JOB.1", using: { _, _ in },
            whenRemoved: { watcher, number in watcher.received.append(number) })
        XCTAssertEqual(try hub.post("JOB.1", text: "last"), 3)
        XCTAssertEqual(try hub.remove("JOB.1"), 2, "the two exact observers are told")
        XCTAssertEqual(exact.items, ["last", "removed JOB.1"])
        XCTAssertEqual(watcher?.received.items, ["JOB.1"])
        XCTAssertEqual(wildcard.count, 0, "a wildcard observer is not told, and stays")
        XCTAssertEqual(hub.observerCount, 1)
        try hub.create("JOB.1")
        XCTAssertEqual(try hub.post("JOB.1"), 1, "the exact observers ended with the number")
        watcher = nil
        withExtendedLifetime(tokens) {}
    }

    /// Handlers run outside the hub's lock: a handler may post, even to its own number, and its own posts come
    /// after the one it is handling (one notification at a time, in post order).
    func testHandlerMayPostFromInside() throws {
        let hub = NotificationHub()
        try hub.create("PING")
        try hub.create("PONG")
        let log = Received<String>()
        let inside = HubLock(false)
        let pings = try hub.addObserver(for: "PING") { note in
            XCTAssertFalse(inside.withLock { $0 }, "one at a time")
            inside.withLock { $0 = true }
            let count = Int(note.text ?? "") ?? 0
            log.append("ping \(count)")
            if count < 3 {
                XCTAssertEqual(try? hub.post("PING", text: "\(count + 1)"), 1)
                log.append("posted \(count + 1)")
            }
            XCTAssertEqual(try? hub.post("PONG", text: "\(count)"), 1)
            inside.withLock { $0 = false }
        }
        let pongs = try hub.addObserver(for: "PONG") { log.append("pong \($0.text ?? "")") }
        XCTAssertEqual(try hub.post("PING", text: "1"), 1)
        XCTAssertEqual(
            log.items,
            ["ping 1", "posted 2", "pong 1", "ping 2", "posted 3", "pong 2", "ping 3", "pong 3"])
        withExtendedLifetime([pings, pongs]) {}
    }

    /// The one-shot observer of Cocoa: the handler ends its own observation.
    func testHandlerMayCancelItsOwnToken() throws {
        let hub = NotificationHub()
        try hub.create("N")
        let received = Received<String>()
        let box = TokenBox()
        let token = try hub.addObserver(for: "N") { note in
            received.append(note.text ?? "")
            box.token.withLock { $0?.cancel() }
        }
        box.token.withLock { $0 = token }
        XCTAssertEqual(try hub.post("N", text: "first"), 1)
        XCTAssertEqual(try hub.post("N", text: "second"), 0)
        XCTAssertEqual(received.items, ["first"])
        XCTAssertEqual(hub.observerCount, 0)
    }

    /// The handler holds the last reference to its own token (a cycle the user made): cancelling from inside
    /// releases the registration, its closure and the token with it, outside the lock (no deadlock).
    func testHandlerHoldingTheLastReferenceToItsTokenEndsWithoutDeadlock() throws {
        let hub = NotificationHub()
        try hub.create("N")
        let box = TokenBox()
        weak var weakToken: ObservationToken?
        do {
            let token = try hub.addObserver(for: "N") { _ in
                let token = box.token.withLock { token in
                    defer { token = nil }
                    return token
                }
                token?.cancel()
            }
            weakToken = token
            box.token.withLock { $0 = token }
        }
        XCTAssertNotNil(weakToken, "the box holds it")
        XCTAssertEqual(try hub.post("N"), 1)
        XCTAssertNil(weakToken)
        XCTAssertEqual(hub.observerCount, 0)
    }

    /// A weak observer whose last reference goes during a post: its deinit (which releases a token, and so calls
    /// the hub) runs after the hub's lock, not under it.
    func testWeakObserverReleasedDuringPostDeinitsOutsideTheLock() throws {
        final class Owner: Sendable {
            let token = HubLock<ObservationToken?>(nil)
        }
        let hub = NotificationHub()
        try hub.create("N")
        try hub.create("OTHER")
        let holder = HubLock<Owner?>(nil)
        do {
            let owner = Owner()
            owner.token.withLock { $0 = try? hub.addObserver(for: "OTHER") { _ in } }
            try hub.addObserver(owner, for: "N") { _, _ in
                holder.withLock { $0 = nil }  // drops the last reference but the ones the hub lent
            }
            holder.withLock { $0 = owner }
        }
        XCTAssertEqual(hub.observerCount, 2)
        XCTAssertEqual(try hub.post("N"), 1)
        XCTAssertEqual(hub.observerCount(of: "OTHER"), 0, "the owner's deinit released its token")
        XCTAssertEqual(hub.observerCount, 0)
    }

    func testHubDoesNotOutliveItsUsersBecauseOfObservers() throws {
        weak var weakHub: NotificationHub?
        var token: ObservationToken?
        do {
            let hub = NotificationHub()
            try hub.create("N")
            token = try hub.addObserver(for: "N") { _ in }
            weakHub = hub
        }
        XCTAssertNil(weakHub, "observers hold their hub weakly")
        token?.cancel()
        token = nil
    }
}
