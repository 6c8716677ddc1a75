import Dispatch
import XCTest

@testable import SubscriptionNotifications

/// The hub from many tasks and threads at once: posters on Dispatch threads, stream readers, closure and weak
/// observers that stay, and others that come and go, numbers created and removed, a retained number watched, with
/// exact counts at the end. `make tsan` runs this target under the thread sanitizer.
final class HubConcurrencyTests: XCTestCase {
    static let posters = 4
    static let postsEach = 1000
    static var total: Int { posters * postsEach }

    func testManyTasksPostObserveAndCancelAtOnce() async throws {
        let hub = NotificationHub()
        try hub.create("S.x")
        try hub.create("S.echo")
        try hub.create("S.r", retained: true)

        // The observers that stay: each must get every post to S.x, each poster's posts in order.
        let streams = try (0..<3).map { _ in try hub.observe("S.x", bufferLimit: Self.total) }
        let plainOrder = OrderCheck()
        let plain = try hub.addObserver(for: "S.x") { plainOrder.see($0) }
        let queuedOrder = OrderCheck()
        let queue = DispatchQueue(label: "stress.observer")
        let queued = try hub.addObserver(for: "S.x", queue: queue) { queuedOrder.see($0) }
        let stayingWatcher = Watcher("stays")
        let weakOrder = OrderCheck()
        try hub.addObserver(stayingWatcher, for: "S.x") { _, note in weakOrder.see(note) }
        let staying = 6
        XCTAssertEqual(hub.observerCount(of: "S.x"), staying)

        let readers = streams.map { stream in
            Task {
                let order = OrderCheck()
                for await note in stream {
                    order.see(note)
                    if order.seen == Self.total { break }
                }
                return order
            }
        }
        let watch = try hub.watch("S.r")
        let lastRevision = Self.postsEach
        let watchReader = Task {
            var changes: [NotificationHub.Change] = []
            for await change in watch {
                changes.append(change)
                if change.revision == lastRevision { break }
            }
            return changes
        }

        let receivers = Counter()
        let churnHandled = Counter()
        let removals = Counter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for poster in 0..<Self.posters {
                group.addTask {
                    let counts = await onDispatchThread {
                        (0..<Self.postsEach).map { index in
                            (try? hub.post("S.x", from: "p\(poster)", text: "\(index)")) ?? -1
                        }
                    }
                    XCTAssertTrue(counts.allSatisfy { $0 >= staying }, "every post reaches the staying observers")
                    receivers.add(counts.reduce(0, +))
                }
            }
            group.addTask {
                await onDispatchThread {
                    for index in 1...Self.postsEach { _ = try? hub.post("S.r", from: "r", text: "\(index)") }
                }
            }
            for churner in 0..<4 {
                group.addTask { try await Self.churn(hub, churner, handled: churnHandled) }
            }
            group.addTask { try await Self.createAndRemove(hub, removals: removals) }
            try await group.waitForAll()
        }
        queue.sync {}  // what the queued observer was handed has run

        for reader in readers {
            let order = await reader.value
            XCTAssertEqual(order.seen, Self.total)
            XCTAssertEqual(order.outOfOrder, 0)
        }
        for order in [plainOrder, queuedOrder, weakOrder] {
            XCTAssertEqual(order.seen, Self.total)
            XCTAssertEqual(order.outOfOrder, 0)
        }
        let changes = await watchReader.value
        XCTAssertEqual(changes.last?.revision, Self.postsEach)
        XCTAssertEqual(changes.reduce(0) { $0 + 1 + $1.missed }, Self.postsEach, "every revision seen or missed")
        for (old, new) in zip(changes, changes.dropFirst()) { XCTAssertEqual(new.old, old.new, "old is the last seen") }
        XCTAssertEqual(removals.value, 200)

        // What the churning observers were counted for is what they could have handled (a cancelled one may
        // skip what it was handed); the staying ones got exactly what was posted.
        let churnCounted = receivers.value - staying * Self.total
        XCTAssertGreaterThanOrEqual(churnCounted, churnHandled.value)
        XCTAssertEqual(hub.observerCount(of: "S.x"), staying, "every churning observer is gone")
        XCTAssertEqual(hub.observerCount, staying + 1, "and the watch, still held here")
        withExtendedLifetime((plain, queued, stayingWatcher, watch)) {}
    }

    /// Regression: a post that resumed a stream's waiting reader under the hub's lock deadlocked with a thread
    /// cancelling that reader (cancelling holds the reader task's lock while the stream's end takes the hub's).
    /// Readers are now resumed only after the hub's lock is dropped.
    func testCancellingReadersWhilePostsReachThemDoesNotDeadlock() async throws {
        let hub = NotificationHub()
        try hub.create("N")
        let stop = Counter()
        let posters = (0..<2).map { _ in
            Task {
                await onDispatchThread {
                    var posts = 0
                    while stop.value == 0 {
                        _ = try? hub.post("N")
                        posts += 1
                    }
                    return posts
                }
            }
        }
        for _ in 0..<300 {
            let stream = try hub.observe("N")
            let reader = Task {
                var read = 0
                for await _ in stream { read += 1 }
                return read
            }
            await Task.yield()
            reader.cancel()
            _ = await reader.value
        }
        stop.add(1)
        for poster in posters { _ = await poster.value }
        XCTAssertEqual(hub.observerCount, 0)
    }

    /// Observers of every kind that come and go while the posts run.
    private static func churn(_ hub: NotificationHub, _ churner: Int, handled: Counter) async throws {
        for round in 0..<300 {
            switch (churner + round) % 5 {
            case 0:
                // A pattern: it also gets S.r and the echoes, which no post to S.x counted; only S.x is counted.
                let token = try hub.addObserver(for: "S.>") { note in if note.number == "S.x" { handled.add(1) } }
                await Task.yield()
                token.cancel()
            case 1:
                let stream = try hub.observe("S.x", bufferLimit: 8)
                let reader = Task { for await _ in stream { handled.add(1) } }
                await Task.yield()
                reader.cancel()
                _ = await reader.value
            case 2:
                var watcher: Watcher? = Watcher("churn")
                try hub.addObserver(watcher!, for: "S.x") { _, _ in handled.add(1) }
                await Task.yield()
                watcher = nil
            case 3:
                // Posts from inside its handler, under contention.
                let token = try hub.addObserver(for: "S.x", group: "g") { _ in
                    handled.add(1)
                    _ = try? hub.post("S.echo")
                }
                await Task.yield()
                withExtendedLifetime(token) {}
            default:
                let token = try hub.addObserver(for: "S.x", queue: .global()) { _ in handled.add(1) }
                await Task.yield()
                _ = hub.observerCount(of: "S.x")
                withExtendedLifetime(token) {}
            }
        }
    }

    /// Numbers made and removed beside the posts: each removal tells its exact observers exactly once.
    private static func createAndRemove(_ hub: NotificationHub, removals: Counter) async throws {
        for round in 0..<200 {
            let number = "T.\(round % 7)"
            try hub.create(number)
            let stream = try hub.observe(number)
            let told = Counter()
            let token = try hub.addObserver(for: number, using: { _ in }, whenRemoved: { _ in told.add(1) })
            XCTAssertEqual(try hub.post(number, text: "\(round)"), 2)
            XCTAssertEqual(try hub.remove(number), 2)
            let notes = try await all(stream)
            XCTAssertEqual(notes.map(\.text), ["\(round)"])
            XCTAssertEqual(told.value, 1)
            withExtendedLifetime(token) {}
            removals.add(1)
            await Task.yield()
        }
    }
}

/// Counts notifications and checks that each sender's come in order (payloads 0, 1, 2, ... per sender).
final class OrderCheck: Sendable {
    private struct State {
        var next: [String: Int] = [:]
        var seen = 0
        var outOfOrder = 0
    }

    private let state = HubLock(State())

    func see(_ note: NotificationHub.Notification) {
        state.withLock { state in
            let sender = note.from ?? "-"
            let index = Int(note.text ?? "") ?? -1
            if index != state.next[sender, default: 0] { state.outOfOrder += 1 }
            state.next[sender] = index + 1
            state.seen += 1
        }
    }

    var seen: Int { state.withLock { $0.seen } }
    var outOfOrder: Int { state.withLock { $0.outOfOrder } }
}

/// A number many threads add to.
final class Counter: Sendable {
    private let count = HubLock(0)

    func add(_ amount: Int) {
        count.withLock { $0 += amount }
    }

    var value: Int { count.withLock { $0 } }
}

/// Runs `body` on a Dispatch thread (not one of the few threads tasks run on), so posters really run side by side.
func onDispatchThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: body()) }
    }
}
