import CSubdShim
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// The one event loop every session runs on, and what its sessions share: the serial queue, the list of sessions
/// to flush at the end of the turn, the traffic counters, and buffers each session borrows in turn.
///
/// Sessions get it at birth and never reach into the ``Server``: the loop is the narrow part of the engine they
/// need. Confined to ``queue`` (`@unchecked Sendable`).
///
/// **Exclusivity.** The stored properties marked `@exclusivity(unchecked)` under `#if !DEBUG` skip the runtime
/// exclusivity checks in release builds (a few percent of every delivery). Their invariant: touched only on the loop's
/// serial queue, and no method keeps an inout access to one of them across a call that can reach it again. Debug
/// builds, which `make test` runs, keep the checks, so every test checks the invariant.
final class EventLoop: @unchecked Sendable {
    /// The queue that owns all state.
    let queue: DispatchQueue
    // The mutable state below is touched on every command and delivery, only on ``queue``, and never through two
    // overlapping accesses (no method here calls out while it holds one): `@exclusivity(unchecked)` drops the
    // runtime checks that showed up in profiles.

    /// Traffic counted by the sessions.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var traffic = TrafficCounters()
    /// A reusable buffer replies are encoded into before they are queued.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var scratch: [UInt8] = []
    /// A 64 KiB read buffer lent to the parser of the session that reads, so an idle session holds none
    /// (``CommandParser/exchangeStorage(with:)``).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var readBuffer: [UInt8] = []
    /// A buffer for input that is read only to be dropped.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var discardBuffer = [UInt8](repeating: 0, count: 65_536)
    /// The loop's own iovecs and scratch buffer (``vectors``, ``writeScratch``).
    let writeTools = WriteTools()
    /// Reusable iovec array for writev.
    let vectors: UnsafeMutablePointer<iovec>
    /// How many iovecs one writev may take.
    let maxVectors: Int
    /// Where small output chunks are gathered for one write (``OutputQueue/gatherChunkLimit``): up to
    /// ``writeScratchSize`` bytes for a plain socket, ``OutputQueue/tlsGatherLimit`` for one `SSL_write`; shared by
    /// every session, filled and written within one call.
    let writeScratch: UnsafeMutableRawBufferPointer
    /// With `threads` above 1, the helpers that share a busy turn's writes (``FlushCrew``); nil with `threads: 1`.
    let crew: FlushCrew?
    /// The sessions of this turn's list for the crew (``writeTogether(_:)``), kept for its capacity.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private var crewList: [Unmanaged<Session>] = []
    /// The most bytes gathered for one write to a plain socket.
    static let writeScratchSize = 65_536
    /// The sessions to flush, each retained once from ``markDirty(_:)`` until it is flushed (so a session closed
    /// meanwhile lives until then); unmanaged, so reading the list costs no reference counting.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private var dirty: [Unmanaged<Session>] = []
    /// Where small message frames are copied once for all their receivers (``OutputQueue/append(_:log:)``).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var frameLog = FrameLog()
    /// The saved state's end of turn, with a state directory (nil without one): while `isPending` (values staged by
    /// this turn's publications, records to write, sessions waiting for their values' answers), ``endOfTurn()``
    /// calls `commit`, which writes and syncs the turn's values together (one fdatasync with `fsync: turn`), then
    /// makes them current, delivers and answers them, or answers `-ERR` when they could not be saved, and lets the
    /// sessions that waited go on (docs/STATE.md).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var stateCommit: (isPending: () -> Bool, commit: () -> Void)?
    /// True while ``endOfTurn()`` runs. No command runs inside it (a session resumed by a flush runs its commands on
    /// the loop's next step, ``Session``), so nothing calls it again from inside: debug builds check that.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private var isEndingTurn = false
    /// Work queued to run at the end of the turn, outside any delivery: the daemon's `$SYS.` notifications (a post
    /// made while the center delivers, or while a session closes, must not reach sessions from inside that).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private var deferred: [() -> Void] = []
    /// Turns ended so far (``Session/lastReadTurn``).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private(set) var turn: UInt64 = 0
    /// The sessions whose write waits for the next turn (``endOfTurn()``), still dirty and retained by the list.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private var heldBack: [Unmanaged<Session>] = []
    /// True while a step is queued that ends a turn for the sessions held back, if no turn comes first.
    private var heldBackStepQueued = false

    /// Bytes, read and written, and malformed commands.
    struct TrafficCounters {
        /// Bytes read from clients.
        var bytesIn: UInt64 = 0
        /// Bytes written to clients.
        var bytesOut: UInt64 = 0
        /// Malformed commands answered with -ERR by the parser.
        var protocolErrors: UInt64 = 0
        /// Writes made by the ``FlushCrew``'s helpers, not by the loop.
        var helperWrites: UInt64 = 0
    }

    /// A loop on `queue`, with `threads` − 1 helpers for its writes (`threads` 1: none, every write on the loop).
    init(queue: DispatchQueue, threads: Int = 1) {
        self.queue = queue
        self.maxVectors = writeTools.maxVectors
        self.vectors = writeTools.vectors
        self.writeScratch = writeTools.scratch
        self.crew = threads > 1 ? FlushCrew(helpers: threads - 1) : nil
    }

    deinit {
        crew?.stop()
    }

    /// Adds a session to the list flushed at the end of this turn (or before, ``flushEarly(reader:)``).
    func markDirty(_ session: Session) {
        guard !session.isDirty else { return }
        session.isDirty = true
        dirty.append(.passRetained(session))
    }

    /// Queues `work` for the end of this turn (``endOfTurn()`` runs it before the flushes).
    func atEndOfTurn(_ work: @escaping () -> Void) {
        deferred.append(work)
    }

    /// Ends a turn: the deferred work, the saved state's commit (``stateCommit``), then one flush (writev) per session
    /// that got output. A flush may defer more work (a session that closed posts `$SYS.client.disconnected`): it is
    /// done in the same turn, by this call. It never runs a command (a session that may read again does so on the
    /// next step), so it is never called from inside itself: debug builds check that (every test runs them); there is
    /// no guard to return early in release builds, as there is nothing for it to catch.
    func endOfTurn() {
        assert(!isEndingTurn, "EventLoop.endOfTurn called from inside itself: a command ran inside the end of a turn")
        isEndingTurn = true
        defer { isEndingTurn = false }
        repeat {
            if !deferred.isEmpty { runDeferred() }
            if let stateCommit, stateCommit.isPending() { stateCommit.commit() }
            // A busy turn (many sessions to write) writes a session that got only a little and did not read in it
            // one turn later, at most, so that more of its messages share a write (each write costs the kernel
            // microseconds: docs/BENCHMARKS.md, "Issue 26"). Never one that read (its replies go out now), never
            // twice in a row.
            let coalescing = dirty.count >= Self.coalescingSessions
            var index = 0
            while index < dirty.count {
                while index < dirty.count {
                    let entry = dirty[index]
                    index += 1
                    if coalescing && entry._withUnsafeGuaranteedRef({ holdsBack($0) }) {
                        heldBack.append(entry)
                    } else {
                        flushOrList(entry)
                    }
                }
                // Finishing the list's writes may make more sessions dirty (a slow consumer's end): the loop above
                // takes them.
                if !crewList.isEmpty { writeTogether() }
            }
            dirty.removeAll(keepingCapacity: true)
        } while !deferred.isEmpty || stateCommit?.isPending() == true
        turn &+= 1
        if !heldBack.isEmpty {
            swap(&dirty, &heldBack)
            if !heldBackStepQueued {
                heldBackStepQueued = true
                queue.asyncAfter(deadline: .now() + Self.heldBackDelay) { [self] in
                    heldBackStepQueued = false
                    if !dirty.isEmpty { endOfTurn() }
                }
            }
        }
        frameLog.rewindIfUnheld()
    }

    /// True when `session` may wait for the next turn (and marks it so).
    private func holdsBack(_ session: Session) -> Bool {
        if session.isHeldBack || session.lastReadTurn == turn || session.output.isBehind
            || session.output.pendingBytes >= Self.coalescingBytes
        {
            return false
        }
        session.isHeldBack = true
        return true
    }

    /// How many sessions to write make a turn busy.
    static let coalescingSessions = 64
    /// The most output a session held back may have.
    static let coalescingBytes = 4096
    /// How long a session held back waits at most, when no turn comes first.
    static let heldBackDelay = DispatchTimeInterval.microseconds(200)

    /// Between two reads of one turn: writes the output of `reader` (its replies let a pipelining client go on) and
    /// of every session with at least ``earlyFlushBytes`` queued, so that they get to work on it while the next read
    /// is parsed; the others wait for the end of the turn (ref-relay's `FLUSH_AT`). A 1 → 10 fan-out reads 64 KiB of
    /// `PUB`s and queues about as much for each subscriber: those go out now; 100 subscribers of one message each
    /// (the bench's `wide`) wait, and get one write per turn, not one per read. A session that is behind waits for
    /// its write source. Each entry flushed leaves the list first, so a turn ended from inside one of these flushes
    /// sees only the others.
    func flushEarly(reader: Session) {
        var index = 0
        while index < dirty.count {
            let session = dirty[index]
            let flushesNow = session._withUnsafeGuaranteedRef {
                !$0.output.isBehind && ($0 === reader || $0.output.pendingBytes >= Self.earlyFlushBytes)
            }
            guard flushesNow else {
                index += 1
                continue
            }
            dirty.swapAt(index, dirty.count - 1)
            dirty.removeLast()
            flushOrList(session)
        }
        if !crewList.isEmpty { writeTogether() }
    }

    /// Between two commands of `reader`: writes its replies now when it is the only session with output (a client
    /// that pipelines publications nobody receives, or requests), so that it gets them while the rest of its read is
    /// run; a 64 KiB read holds about 400 `PUB`s of 128 B, and their window of replies would otherwise wait for all
    /// of them (the harness's `ingest`: about 1.4 times the publications, docs/BENCHMARKS.md, "Issue 26"). Not when
    /// others have output: their writes are the turn's (a fan-out's subscribers get more per write that way).
    func flushAlone(_ reader: Session) {
        guard dirty.count == 1, dirty[0].toOpaque() == Unmanaged.passUnretained(reader).toOpaque(),
            !reader.output.isBehind
        else { return }
        let entry = dirty.removeLast()
        flush(entry)
    }

    /// Flushes a session taken from the dirty list now, or, when the crew may write it, puts it in ``crewList`` for
    /// ``writeTogether()``.
    private func flushOrList(_ session: Unmanaged<Session>) {
        if crew != nil && session._withUnsafeGuaranteedRef({ $0.writesWithCrew }) {
            crewList.append(session)
        } else {
            flush(session)
        }
    }

    /// Writes the sessions in ``crewList`` (each taken from the dirty list, its reference with it): with the crew
    /// when they are worth a helper's wake (``FlushCrew/shares(count:)``), else one by one on the loop. Each
    /// one's write is then finished on the loop (``Session/finishWrite(_:)``: what went out is released, the state
    /// machine told, the rest written), and the list's reference given back.
    private func writeTogether() {
        guard let crew, FlushCrew.shares(count: crewList.count) else {
            for entry in crewList { flush(entry) }
            crewList.removeAll(keepingCapacity: true)
            return
        }
        let helped = crew.write(crewList, tools: writeTools) { entry, outcome in
            entry._withUnsafeGuaranteedRef {
                $0.isDirty = false
                $0.isHeldBack = false
                $0.finishWrite(outcome)
            }
            entry.release()
        }
        traffic.helperWrites += UInt64(helped)
        crewList.removeAll(keepingCapacity: true)
    }

    /// Flushes a session taken from the dirty list and gives back the list's reference to it.
    private func flush(_ session: Unmanaged<Session>) {
        session._withUnsafeGuaranteedRef {
            $0.isDirty = false
            $0.isHeldBack = false
            $0.flush()
        }
        session.release()
    }

    /// Output a session must have queued to be written between two reads (``flushEarly(reader:)``).
    static let earlyFlushBytes = 32 << 10

    private func runDeferred() {
        while !deferred.isEmpty {
            let work = deferred
            deferred.removeAll()
            for item in work { item() }
        }
    }
}
