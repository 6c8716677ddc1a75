import XCTest

@testable import SubscriptionNotifications

// The helpers lock with the hub's own HubLock, not Synchronization's Mutex, which ThreadSanitizer cannot see on
// Linux (see HubLock): `make tsan` runs these tests.

/// What handlers were given, in the order they were given it, from any thread.
final class Received<Item: Sendable>: Sendable {
    private let store = HubLock<[Item]>([])

    func append(_ item: Item) {
        store.withLock { $0.append(item) }
    }

    var items: [Item] {
        store.withLock { $0 }
    }

    var count: Int {
        store.withLock { $0.count }
    }
}

/// A weak observer for the tests: any small Sendable class.
final class Watcher: Sendable {
    let name: String
    let received = Received<String>()

    init(_ name: String) {
        self.name = name
    }
}

/// A box a handler can reach its own token through (set once the token exists).
final class TokenBox: Sendable {
    let token = HubLock<ObservationToken?>(nil)
}

struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// The first `count` elements of `sequence` (fewer if it ends first), read in a child task; throws after `seconds`.
func take<S: AsyncSequence & Sendable>(
    _ count: Int, from sequence: S, within seconds: Double = 10
) async throws -> [S.Element] where S.Element: Sendable {
    try await withThrowingTaskGroup(of: [S.Element].self) { group in
        group.addTask {
            var items: [S.Element] = []
            guard count > 0 else { return items }
            for try await item in sequence {
                items.append(item)
                if items.count == count { break }
            }
            return items
        }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw TimedOut(what: "\(count) elements")
        }
        let first = try await group.next()!
        group.cancelAll()
        return first
    }
}

/// Every element of `sequence` until it ends; throws after `seconds`.
func all<S: AsyncSequence & Sendable>(
    _ sequence: S, within seconds: Double = 10
) async throws -> [S.Element] where S.Element: Sendable {
    try await take(.max, from: sequence, within: seconds)
}

/// Waits until `condition` holds, checking every millisecond; fails the test after `seconds`.
func eventually(
    _ what: String, within seconds: Double = 10, file: StaticString = #filePath, line: UInt = #line,
    _ condition: () -> Bool
) async {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !condition() {
        if ContinuousClock.now > deadline {
            XCTFail("timed out waiting for \(what)", file: file, line: line)
            return
        }
        try? await Task.sleep(for: .milliseconds(1))
    }
}

extension NotificationHub.Notification {
    /// `number from text` in one word, for compact expectations.
    var summary: String { "\(number) \(from ?? "-") \(text ?? "?")" }
}
