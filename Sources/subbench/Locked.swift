import Foundation

/// A value behind an `NSLock`, for subbench's threads (its reader threads, the progress board, the daemon's output).
///
/// Not `Synchronization.Mutex`: on Linux a contended `Mutex` is handed over inside the kernel (a PI futex), where
/// ThreadSanitizer cannot see it, and `make tsan` runs subbench instrumented (SubbenchTLSTests); `NSLock` is a
/// pthread mutex, which it intercepts (the same reason as the hub's `HubLock`). The reconnecting client's `Guarded`
/// is the same class; subbench depends on none of the project's library targets, on purpose (it measures them:
/// Package.swift), so it keeps its own. `@unchecked Sendable`: `value` is only touched inside `lock`.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// A lock around `value`.
    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value, under the lock.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
