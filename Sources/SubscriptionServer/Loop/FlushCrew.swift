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
/// **How a list is shared.** Each thread claims the next entry with one compare-and-exchange of ``ticket`` (the
/// list's number and the next index), writes it and counts it ``finished``; the loop wakes one sleeping helper per 8
/// entries, and a helper that wakes late finds the list taken or gone and sleeps again, so the loop never waits for
/// a wake, only for writes already under way. Helpers sleep on a condition variable (a POSIX one, which
/// ThreadSanitizer sees, as ``HubLock``'s mutex).
///
/// `@unchecked Sendable`, with these invariants (checked by `make tsan`, which runs the whole suite with the default
/// `threads`, 2 on CI's two cores; the lists long enough to share come mostly from `StressTests`, run there with
/// `threads: 4`):
/// - the list (``entries``, ``length``) is written by the loop only between lists: every entry of the last one was
///   claimed and finished, and a helper reads an entry only after claiming it with a ticket of the current list
///   (its exchange acquires what the loop released with the ticket);
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

    /// Lists shorter than this are written by the loop alone. A helper's wake costs about as much as a few writes
    /// (docs/BENCHMARKS.md, "Issue 26": a wake ≈ 10 µs of process CPU, a write of a few small messages
    /// 2–5 µs), and a short list is also what a turn after a stall brings (the harness's `latency`, 10
    /// subscribers): there a helper that claimed a write and then waited for a core held the loop at the join, and
    /// the latency tail with helpers was 1.29 times the one without (docs/BENCHMARKS.md, "Issue 26: the helpers").
    /// A list of a few sessions with much to write (fan-out to 10) is written by the loop alone too.
    static let minimumEntries = 32

    /// Entries per helper woken: a list wakes at most one sleeping helper for each this many.
    static let entriesPerHelper = 8

    /// True when a list of `count` sessions is worth a helper's wake.
    static func shares(count: Int) -> Bool {
        count >= minimumEntries
    }

    /// How many helper threads write beside the loop.
    let helperCount: Int

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let wake: UnsafeMutablePointer<pthread_cond_t>
    /// Under ``mutex``: the last list handed out (its number), so a helper joins each one once.
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
    /// The list's number (low 32 bits of its ``generation``) in the high half, the next entry to claim in the low
    /// half: a claim is one compare-and-exchange that also checks the list is still the one the thread joined, so
    /// a helper that comes late (the list done, or the next one handed out) claims nothing and touches nothing.
    private let ticket = Atomic<UInt64>(0)
    /// The list's length, stored before its ``ticket``.
    private let length = Atomic<Int>(0)
    /// Entries of the list written.
    private let finished = Atomic<Int>(0)

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
    /// outcome, on the loop, in the list's order. Returns how many of the writes the helpers made. Not reentrant:
    /// `finish` must not hand out another list (debug builds check it).
    @discardableResult
    func write(
        _ sessions: [Unmanaged<Session>], tools: WriteTools, finish: (Unmanaged<Session>, WriteOutcome) -> Void
    ) -> Int {
        assert(!isWriting, "FlushCrew.write called from inside a list's finish")
        isWriting = true
        defer { isWriting = false }
        if threads.isEmpty { startHelpers() }
        // No helper reads the entries now: every claim of the last list was finished, and a late helper checks
        // the ticket before it reads anything.
        if sessions.count > capacity {
            entries.deallocate()
            capacity = max(sessions.count, capacity * 2)
            entries = .allocate(capacity: capacity)
        }
        for (index, session) in sessions.enumerated() {
            (entries + index).initialize(to: Entry(session: session, outcome: .full, byHelper: false))
        }
        let count = sessions.count
        length.store(count, ordering: .relaxed)
        finished.store(0, ordering: .relaxed)
        pthread_mutex_lock(mutex)
        generation &+= 1
        let list = UInt32(truncatingIfNeeded: generation)
        ticket.store(UInt64(list) << 32, ordering: .releasing)
        // One helper for every 8 entries at most: a wake costs microseconds, a short list is not worth many.
        let wanted = min(sleeping, max(1, count / Self.entriesPerHelper))
        for _ in 0..<wanted { pthread_cond_signal(wake) }
        pthread_mutex_unlock(mutex)

        work(on: list, with: tools, byHelper: false)

        // Only writes already under way are left (each claimed entry is being written now).
        var spins = 0
        while finished.load(ordering: .acquiring) < count {
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

    /// True while the loop is in ``write(_:tools:finish:)`` (for its reentrancy check).
    private var isWriting = false

    /// Claims and writes entries of list `list` until none is left, or the list is no longer the current one.
    private func work(on list: UInt32, with tools: WriteTools, byHelper: Bool) {
        while true {
            var word = ticket.load(ordering: .acquiring)
            var index = 0
            while true {
                guard UInt32(truncatingIfNeeded: word >> 32) == list else { return }
                index = Int(word & 0xffff_ffff)
                // A length of a later list only goes with a ticket of that list: the exchange below then fails.
                guard index < length.load(ordering: .relaxed) else { return }
                let (exchanged, original) = ticket.compareExchange(
                    expected: word, desired: word + 1, successOrdering: .acquiringAndReleasing,
                    failureOrdering: .acquiring)
                if exchanged { break }
                word = original
            }
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

    /// A helper's life: sleep until a list is handed out, write from it, until ``stop()``.
    private func serve() {
        let tools = WriteTools()
        var seen: UInt64 = 0
        pthread_mutex_lock(mutex)
        while true {
            while !isStopping && generation == seen {
                sleeping += 1
                pthread_cond_wait(wake, mutex)
                sleeping -= 1
            }
            if isStopping { break }
            seen = generation
            pthread_mutex_unlock(mutex)
            work(on: UInt32(truncatingIfNeeded: seen), with: tools, byHelper: true)
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
