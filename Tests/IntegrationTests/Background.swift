import Foundation

/// Work running on its own thread while the test thread does something else; `wait` joins it with a timeout.
final class Background: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var failure: (any Error)?
    private let name: String

    /// Starts `body` on a new thread named `name`.
    init(_ name: String, _ body: @escaping @Sendable () throws -> Void) {
        self.name = name
        let thread = Thread { [self] in
            do {
                try body()
            } catch {
                lock.withLock { failure = error }
            }
            done.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Waits for the work to finish; rethrows its error, throws `timeout` when it runs longer than `timeout`.
    func wait(timeout: TimeInterval) throws {
        guard done.wait(timeout: .now() + timeout) == .success else {
            throw HarnessError.timeout("background work '\(name)' did not finish within \(timeout) s")
        }
        done.signal()
        if let failure = lock.withLock({ failure }) { throw failure }
    }
}

/// A flag one thread raises and others read.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var raised = false

    /// Raises the flag.
    func raise() { lock.withLock { raised = true } }

    /// Whether it was raised.
    var isRaised: Bool { lock.withLock { raised } }
}

/// A counter that one thread advances and another waits on.
final class Counter: @unchecked Sendable {
    private let condition = NSCondition()
    private var value = 0
    private var ended = false

    /// Adds `amount` and wakes waiters.
    func add(_ amount: Int = 1) {
        condition.lock()
        value += amount
        condition.broadcast()
        condition.unlock()
    }

    /// Marks that no further increments will come (the producer stopped), waking waiters.
    func end() {
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }

    /// The current value.
    var current: Int {
        condition.lock()
        defer { condition.unlock() }
        return value
    }

    /// Waits until the value is at least `target`; throws when the producer ended first or on timeout.
    func wait(atLeast target: Int, timeout: TimeInterval, _ what: String) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while value < target {
            if ended { throw HarnessError.closed("\(what): producer stopped at \(value) of \(target)") }
            if !condition.wait(until: deadline) {
                throw HarnessError.timeout("\(what): \(value) of \(target) within \(timeout) s")
            }
        }
    }
}
