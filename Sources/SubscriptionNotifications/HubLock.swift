#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value behind a POSIX mutex: the hub's state and each observer's mailbox.
///
/// Not `Synchronization.Mutex`, on purpose: on Linux a contended `Mutex` is handed over inside the kernel (a PI
/// futex), where ThreadSanitizer cannot see it, so `make tsan` reported every contended handover as a data race (a
/// ten-line program counting to 80,000 under a `Mutex` on four threads got them too). ThreadSanitizer intercepts
/// `pthread_mutex_lock` and `pthread_mutex_unlock`, so races it reports here are real. Debug builds use an
/// error-checking mutex: taking the lock again on the thread that holds it (which would hang) stops with a message.
///
/// `@unchecked Sendable`: `value` is read and written only inside ``withLock(_:)``, with the mutex held; like
/// `Mutex`, the value goes in and out as `sending`, so the compiler checks that nothing else keeps a reference to it.
final class HubLock<Value: ~Copyable>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let value: UnsafeMutablePointer<Value>

    init(_ initialValue: consuming sending Value) {
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if DEBUG
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        #endif
        let result = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
        value = .allocate(capacity: 1)
        value.initialize(to: initialValue)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` on the value with the mutex held.
    func withLock<Result: ~Copyable, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        let locked = pthread_mutex_lock(mutex)
        precondition(locked == 0, "a hub lock was taken again by the thread that holds it (error \(locked))")
        defer {
            let unlocked = pthread_mutex_unlock(mutex)
            precondition(unlocked == 0, "pthread_mutex_unlock failed: \(unlocked)")
        }
        return try body(&value.pointee)
    }
}
