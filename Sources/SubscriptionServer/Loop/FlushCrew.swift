import CSubdShim
import SubscriptionSystem
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The threads that share a busy turn's writes with the event loop (`threads` − 1 of them; docs/ARCHITECTURE.md,
/// "More than one core"): the loop hands them a list of sessions to write, writes from the same list itself, and
/// goes on once every session in it was written. Fork and join: while a list is being written the loop does nothing
/// else, so no session's output changes under a write, and everything a write's outcome changes (what was written,
/// the state machine, a slow consumer's end) is done by the loop afterwards (``Session/finishWrite(_:)``). What runs
/// on a helper is the pure part of a write: the iovecs from the session's ``OutputQueue`` (a read of it) and one
/// `writev(2)`.
///
/// **How a list is shared.** Each thread claims the next entry with one atomic increment (``next``), writes it and
/// counts it ``finished``; a helper that wakes late finds nothing left and sleeps again, so the loop never waits for
/// a helper to wake, only for writes already under way. Helpers sleep on a condition variable (a POSIX one, which
/// ThreadSanitizer sees, as ``HubLock``'s mutex) and are woken only when one sleeps.
///
/// `@unchecked Sendable`, with these invariants (each checked by `make tsan`, which runs every test with the
/// default `threads`, more than 1 on CI's two cores):
/// - the list (``entries``, ``count``) is written by the loop only while no helper is in a job: ``isOpen`` is
///   false (set under ``mutex``) and ``active`` is 0; a helper reads it only after joining under ``mutex``;
/// - an entry is written by the one thread that claimed it, and read by the loop after ``finished`` counted it
///   (release by the writer, acquire by the loop);
/// - the sessions in a list are distinct, and no thread changes any session while a list is written.
final class FlushCrew: @unchecked Sendable {
    /// One session to write, and what its write did.
    struct Entry {
        /// The session (retained by the loop's dirty list until it is finished).
        var session: Unmanaged<Session>
        /// What the write did.
        var outcome: WriteOutcome
        /// True when a helper made the write (for STATS `helper_writes`).
        var byHelper: Bool
    }

    /// What one write of a session's output did.
    enum WriteOutcome {
        /// `written` of the `offered` bytes went out (0 of 0: nothing was queued).
        case wrote(written: Int, offered: Int)
        /// The socket took nothing (EAGAIN).
        case full
        /// writev(2) failed with this errno.
        case failed(errno: Int32)
    }

    /// Lists shorter than this are written by the loop alone: a helper's wake costs about as much as a few writes
    /// (docs/BENCHMARKS.md, "Issue 26": a wake ≈ 10 µs of process CPU, a write of a few small messages 2–5 µs).
    static let minimumEntries = 8
    /// A list shorter than this is shared only when it holds at least ``minimumBytes``: a few small writes (one
    /// message to each of 10 subscribers, the harness's `latency`) cost less than the wake, whose CPU would be taken
    /// from the clients on the same cores.
    static let manyEntries = 32
    /// The bytes that make a list shorter than ``manyEntries`` worth sharing.
    static let minimumBytes = 65_536

    /// True when `count` sessions with `bytes` queued in all are worth a helper's wake.
    static func shares(count: Int, bytes: Int) -> Bool {
        count >= minimumEntries && (count >= manyEntries || bytes >= minimumBytes)
    }

    /// How many helper threads write beside the loop.
    let helperCount: Int

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let wake: UnsafeMutablePointer<pthread_cond_t>
    /// Under ``mutex``: true while helpers may join the list.
    private var isOpen = false
    /// Under ``mutex``: counts the lists handed out, so a helper joins each one once.
    private var generation: UInt64 = 0
    /// Under ``mutex``: helpers waiting on ``wake``.
    private var sleeping = 0
    /// Under ``mutex``: true once the crew is told to stop.
    private var isStopping = false
    /// Helpers started (lazily, on the first list: a server that never has a busy turn starts none).
    private var threads: [pthread_t] = []

    /// The list: see the invariants above.
    private var entries: UnsafeMutablePointer<Entry>
    private var capacity: Int
    private var count = 0
    /// The next entry to claim.
    private let next = Atomic<Int>(0)
    /// Entries written.
    private let finished = Atomic<Int>(0)
    /// Helpers inside the list (joined and not yet left).
    private let active = Atomic<Int>(0)

    /// A crew of `helpers` threads (at least 1).
    init(helpers: Int) {
        precondition(helpers >= 1, "a flush crew has at least one helper")
        helperCount = helpers
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        wake = .allocate(capacity: 1)
        pthread_cond_init(wake, nil)
        capacity = 256
        entries = .allocate(capacity: capacity)
    }

    deinit {
        entries.deallocate()
        pthread_cond_destroy(wake)
        wake.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Writes each of `sessions` once, the loop (which calls this, with its own iovecs and scratch buffer in
    /// `tools`) and the helpers together, and returns when all are written; `finish` then gets each session's
    /// outcome, on the loop, in the list's order. Returns how many of the writes the helpers made.
    @discardableResult
    func write(
        _ sessions: [Unmanaged<Session>], tools: WriteTools, finish: (Unmanaged<Session>, WriteOutcome) -> Void
    ) -> Int {
        if threads.isEmpty { startHelpers() }
        if sessions.count > capacity {
            entries.deallocate()
            capacity = max(sessions.count, capacity * 2)
            entries = .allocate(capacity: capacity)
        }
        for (index, session) in sessions.enumerated() {
            (entries + index).initialize(to: Entry(session: session, outcome: .full, byHelper: false))
        }
        count = sessions.count
        next.store(0, ordering: .relaxed)
        finished.store(0, ordering: .relaxed)
        pthread_mutex_lock(mutex)
        isOpen = true
        generation &+= 1
        if sleeping > 0 { pthread_cond_broadcast(wake) }
        pthread_mutex_unlock(mutex)

        work(with: tools, byHelper: false)

        pthread_mutex_lock(mutex)
        isOpen = false
        pthread_mutex_unlock(mutex)
        // Only writes already under way are left (a helper that claimed an entry is writing it now).
        var spins = 0
        while finished.load(ordering: .acquiring) < count || active.load(ordering: .acquiring) > 0 {
            spins += 1
            if spins > 64 { sched_yield() }
        }
        var helped = 0
        for index in 0..<count {
            let entry = entries[index]
            if entry.byHelper { helped += 1 }
            finish(entry.session, entry.outcome)
        }
        return helped
    }

    /// Claims and writes entries until none is left.
    private func work(with tools: WriteTools, byHelper: Bool) {
        while true {
            let index = next.wrappingAdd(1, ordering: .relaxed).oldValue
            guard index < count else { return }
            let session = entries[index].session
            entries[index].outcome = session._withUnsafeGuaranteedRef { Self.writeOnce($0, tools) }
            entries[index].byHelper = byHelper
            finished.wrappingAdd(1, ordering: .releasing)
        }
    }

    /// One writev(2) of what `session` has queued (``OutputQueue/nextVectors(_:maxVectors:scratch:)``, a read).
    private static func writeOnce(_ session: Session, _ tools: WriteTools) -> WriteOutcome {
        let (vectorCount, offered) = session.output.nextVectors(
            tools.vectors, maxVectors: tools.maxVectors, scratch: tools.scratch)
        guard vectorCount > 0 else { return .wrote(written: 0, offered: 0) }
        do throws(SystemCallError) {
            guard case .processed(let written) = try Syscall.writev(session.fd, tools.vectors, vectorCount) else {
                return .full
            }
            return .wrote(written: written, offered: offered)
        } catch {
            return .failed(errno: error.errno)
        }
    }

    // MARK: Helpers

    private func startHelpers() {
        for _ in 0..<helperCount {
            var thread = pthread_t()
            let context = Unmanaged.passRetained(self).toOpaque()
            let created = pthread_create(
                &thread, nil,
                { context in
                    let crew = Unmanaged<FlushCrew>.fromOpaque(context!).takeRetainedValue()
                    crew.serve()
                    return nil
                }, context)
            precondition(created == 0, "pthread_create failed: \(created)")
            threads.append(thread)
        }
    }

    /// A helper's life: sleep until a list is handed out, join it, write from it, until ``stop()``.
    private func serve() {
        let tools = WriteTools()
        var seen: UInt64 = 0
        pthread_mutex_lock(mutex)
        while true {
            while !isStopping && (!isOpen || generation == seen) {
                sleeping += 1
                pthread_cond_wait(wake, mutex)
                sleeping -= 1
            }
            if isStopping { break }
            seen = generation
            active.wrappingAdd(1, ordering: .relaxed)
            pthread_mutex_unlock(mutex)
            work(with: tools, byHelper: true)
            active.wrappingSubtract(1, ordering: .releasing)
            pthread_mutex_lock(mutex)
        }
        pthread_mutex_unlock(mutex)
    }

    /// Stops the helpers and waits for them to end (the loop is going away).
    func stop() {
        pthread_mutex_lock(mutex)
        isStopping = true
        pthread_cond_broadcast(wake)
        pthread_mutex_unlock(mutex)
        for thread in threads { pthread_join(thread, nil) }
        threads = []
    }
}

/// What one thread needs to write: its own iovec array and scratch buffer (``OutputQueue/nextVectors``).
final class WriteTools: @unchecked Sendable {
    /// Reusable iovec array for writev.
    let vectors: UnsafeMutablePointer<iovec>
    /// How many iovecs one writev may take.
    let maxVectors: Int
    /// Where small chunks are gathered for one write.
    let scratch: UnsafeMutableRawBufferPointer

    /// Tools of ``EventLoop/writeScratchSize`` bytes and up to IOV_MAX (at most 1,024) iovecs.
    init() {
        maxVectors = Int(min(subd_iov_max(), 1024))
        vectors = .allocate(capacity: maxVectors)
        scratch = .allocate(byteCount: EventLoop.writeScratchSize, alignment: 16)
    }

    deinit {
        vectors.deallocate()
        scratch.deallocate()
    }
}
