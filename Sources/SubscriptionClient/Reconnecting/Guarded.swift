import Foundation

/// A value behind a lock, for the few objects of the reconnecting client that several threads touch. `NSLock`, as
/// ``Backlog`` uses, rather than `Synchronization.Mutex` (see SubscriptionNotifications' `HubLock` for why).
final class Guarded<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` on the value under the lock. `body` must not call back into code that takes this lock.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
