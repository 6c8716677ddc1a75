import SubscriptionWire

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The state directory of subd, open for the event loop: it appends what changes to the log `subd-state.log` and
/// says when it is on disk.
///
/// - ``numberCreated(_:kind:)`` and ``numberRemoved(_:)`` write and fdatasync before they return: answer `+OK` after
///   them, and `-ERR` (without the change) when they throw.
/// - ``valuePublished(_:)`` only adds the record to a buffer. Once per event-loop turn, before the values are made
///   current or answered, call ``endOfTurn()``: under ``FsyncPolicy/everyTurn`` it writes the turn's records with one
///   write(2) and one fdatasync(2) (``commit()``); under ``FsyncPolicy/everySecond`` it only writes them
///   (``flush()``), and a one-second timer calls ``commit()``. When it throws, the values are not saved: answer them
///   `-ERR` and call ``discardUnwritten()``.
/// - After a turn, ``compactIfNeeded(currentValue:)`` rewrites the log when it has grown too long.
///
/// Records reach the file in the order of the calls. **A write that fails** (a full disk) is undone: the file is cut
/// back to the records before it, so it never holds half a record or a record nobody was told about. The store
/// stays usable, a later call tries again, and the records it could not write stay buffered until
/// ``discardUnwritten()``, except the `created` or `removed` record of the call that threw. **An fdatasync that
/// fails** cannot be retried safely (the kernel may have dropped the pages it could not write, and a later sync
/// would succeed without them): the store cuts the file back to where the records of the failing call begin and syncs
/// that, so a record answered `-ERR` is not found at the next start, then throws
/// ``StateError/unusable(cause:)`` from every call until a restart recovers what is on disk. Under `everysec` the
/// once-a-second ``commit()`` cuts nothing back: the values it syncs were answered when they were written. When
/// the cut itself fails, ``hasUncertainTail`` is set: the records the failed call was to confirm may or may not be on
/// disk.
///
/// Not thread-safe: one owner (the event loop's queue) makes every call. **Exclusivity.** The properties a value's
/// record touches are marked `@exclusivity(unchecked)` under `#if !DEBUG`: release builds skip their runtime checks
/// (a few percent of a retained publication). Their invariant: only that one owner touches them, and no method keeps
/// an inout access to one across a call that can reach it again (the store calls out only to its ``StateDisk`` and,
/// in a compaction, to `currentValue`, which must not call the store). Debug builds, which `make test` runs, keep
/// the checks. The store holds an exclusive lock on the
/// directory while it is open. Releasing it without ``close()`` loses the buffered records, as a crash would.
public final class StateStore {
    /// The log's file name in the state directory.
    public static let logFileName = "subd-state.log"
    /// The file a compaction writes before renaming it over the log.
    public static let temporaryFileName = "subd-state.log.tmp"

    /// The state directory.
    public let directory: String
    /// The log's path.
    public let logPath: String
    /// When published values are synced.
    public let policy: FsyncPolicy
    /// When the log is compacted.
    public let compaction: CompactionPolicy
    /// What the store did since it was opened.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    public internal(set) var counters = StateCounters()

    // Internal rather than private: the extensions in StateStore+Open.swift and StateStore+Compaction.swift use them.
    let temporaryPath: String
    let disk: any StateDisk
    private var directoryFD: Int32
    private var logFD: Int32
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private(set) var index: LiveIndex
    /// Records appended and not yet written to the file.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private var pending: [UInt8] = []
    /// The index entry each buffered staged value replaced, oldest first: ``discardUnwritten()`` puts them back in
    /// reverse.
    /// Emptied by every write that succeeds.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private var journal: [(name: String, entry: LiveIndex.Entry)] = []
    /// Bytes of the log file: its header and every complete record written.
    private(set) var writtenBytes: Int
    /// Bytes were written since the last fdatasync.
    private var unsynced = false
    /// Why the store stopped, after a failure it cannot undo.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private var failure: String?
    /// A failed sync's records could not be cut off the log: they may be on disk or not (see the type's comment).
    public private(set) var hasUncertainTail = false

    init(
        directory: String, policy: FsyncPolicy, compaction: CompactionPolicy, disk: any StateDisk, directoryFD: Int32,
        logFD: Int32, index: LiveIndex, writtenBytes: Int
    ) {
        self.directory = directory
        self.logPath = directory + "/" + Self.logFileName
        self.temporaryPath = directory + "/" + Self.temporaryFileName
        self.policy = policy
        self.compaction = compaction
        self.disk = disk
        self.directoryFD = directoryFD
        self.logFD = logFD
        self.index = index
        self.writtenBytes = writtenBytes
    }

    deinit {
        if logFD >= 0 { FileCalls.close(logFD) }
        if directoryFD >= 0 { FileCalls.close(directoryFD) }
    }

    /// Bytes of the log, written or buffered.
    public var logBytes: Int { writtenBytes + pending.count }
    /// Bytes a compacted log of the live state would take.
    public var liveBytes: Int { index.liveBytes }
    /// The log is longer than ``compaction`` allows.
    public var needsCompaction: Bool {
        logBytes > max(compaction.minimumBytes, compaction.factor * liveBytes)
    }
    /// Something was appended since the last ``commit()``: a commit would write or sync.
    public var hasUncommittedRecords: Bool { !pending.isEmpty || unsynced }
    /// ``endOfTurn()`` has something to do: records to write, or under ``FsyncPolicy/everyTurn`` to sync. False once
    /// the store stopped (every call would throw the same error).
    public var needsEndOfTurn: Bool {
        failure == nil && (!pending.isEmpty || (unsynced && policy == .everyTurn))
    }
    /// False once a failure the store cannot undo stopped it (a failed sync): every call throws until a restart.
    public var isUsable: Bool { failure == nil }
    /// How many numbers the state holds.
    public var numberCount: Int { index.entries.count }

    /// The revision of the last value appended for `number` (buffered or written); 0 when it has none, nil when the
    /// store does not hold it as a retained number.
    public func lastRevision(of number: String) -> UInt64? {
        guard let entry = index.entries[ExactName(number)], entry.kind == .retained else { return nil }
        return entry.revision
    }

    // MARK: - Changes

    /// Records that `name` was created as `kind`, and returns once the record is on disk (written and
    /// fdatasync'd, with every record appended before it). Throws, with nothing recorded, when it cannot be.
    ///
    /// `name` must not be in the state (the caller calls this only for a number it really created).
    public func numberCreated(_ name: String, kind: StoredNumber.Kind) throws(StateError) {
        try checkUsable()
        let mark = pending.count
        let size = LogFormat.appendCreated(name, kind: kind, to: &pending)
        do {
            try index.create(name, kind: kind, recordBytes: size)
        } catch {
            preconditionFailure("StateStore.numberCreated: \(error)")
        }
        let start = writtenBytes
        do {
            try writePending()
        } catch {
            pending.removeSubrange(mark...)
            index.restore(name, nil)
            throw error
        }
        counters.records += 1
        try syncLog(cuttingBackTo: start)
    }

    /// Records that `name` was removed (with its value), and returns once the record is on disk. Throws, with
    /// nothing recorded, when it cannot be.
    ///
    /// `name` must be in the state.
    public func numberRemoved(_ name: String) throws(StateError) {
        try checkUsable()
        let old: LiveIndex.Entry
        do {
            old = try index.remove(name)
        } catch {
            preconditionFailure("StateStore.numberRemoved: \(error)")
        }
        let mark = pending.count
        LogFormat.appendRemoved(name, to: &pending)
        let start = writtenBytes
        do {
            try writePending()
        } catch {
            pending.removeSubrange(mark...)
            index.restore(name, old)
            throw error
        }
        counters.records += 1
        try syncLog(cuttingBackTo: start)
    }

    /// Records a retained number's new value in the buffer; no system call. It reaches the file at the next
    /// ``flush()``, ``commit()``, ``endOfTurn()`` or change of a number, and the disk at the next sync.
    ///
    /// `value.number` must be a retained number of the state, and `value.revision` above its current revision.
    public func valuePublished(_ value: StoredValue) throws(StateError) {
        try valuePublished(
            value.number, revision: value.revision, sender: value.sender, info: value.info, payload: value.payload[...])
    }

    /// ``valuePublished(_:)`` from the value's parts: the payload is copied once, into the buffered record. A `staged`
    /// value is not published yet: ``discardUnwritten()`` takes it back when its write fails. Any other (a value the
    /// caller made current already, e.g. from a cluster) stays in the index when its record is discarded, so the index
    /// keeps agreeing with what is current, and a compaction writes it from there.
    public func valuePublished(
        _ number: String, revision: UInt64, sender: String?, info: [InfoPair], payload: ArraySlice<UInt8>,
        staged: Bool = true
    ) throws(StateError) {
        try checkUsable()
        let mark = pending.count
        let size = LogFormat.appendValue(
            of: number, revision: revision, sender: sender, info: info, payload: payload, to: &pending)
        do {
            let replaced = try index.publish(number, revision: revision, recordBytes: size)
            if staged { journal.append((number, replaced)) }
        } catch {
            pending.removeSubrange(mark...)
            preconditionFailure("StateStore.valuePublished: \(error)")
        }
        counters.records += 1
    }

    /// Drops the buffered records (the values of a turn whose ``endOfTurn()`` threw, answered `-ERR`): the store
    /// forgets the staged ones, as if they had never been published, so the next value of a number follows its last
    /// saved one.
    public func discardUnwritten() {
        while let (name, entry) = journal.popLast() { index.restore(name, entry) }
        pending.removeAll(keepingCapacity: pending.capacity <= 1 << 20)
    }

    // MARK: - Making it durable

    /// Writes the buffered records to the log with one write(2) (more only when the kernel takes part of it), and
    /// no sync: after it they survive a crash of subd, not of the machine. Nothing to write, no call.
    public func flush() throws(StateError) {
        try checkUsable()
        try writePending()
    }

    /// Writes the buffered records and fdatasyncs the log when anything was written since the last sync: at most
    /// one fdatasync per call, none when nothing was appended.
    public func commit() throws(StateError) {
        try checkUsable()
        try writePending()
        try syncLog()
    }

    /// What the event loop calls once per turn, before the turn's values are made current and answered: a
    /// ``commit()`` under ``FsyncPolicy/everyTurn`` (a failed sync cuts the turn's records back off the log), a
    /// ``flush()`` under ``FsyncPolicy/everySecond`` (whose timer calls ``commit()``).
    public func endOfTurn() throws(StateError) {
        switch policy {
        case .everyTurn:
            try checkUsable()
            let start = writtenBytes
            try writePending()
            try syncLog(cuttingBackTo: start)
        case .everySecond:
            try flush()
        }
    }

    /// Commits, then closes the log and releases the directory. The store may not be used after.
    public func close() throws(StateError) {
        precondition(logFD >= 0, "StateStore.close: already closed")
        defer {
            FileCalls.close(logFD)
            FileCalls.close(directoryFD)
            logFD = -1
            directoryFD = -1
        }
        try commit()
    }

    // MARK: - Internals

    func checkUsable() throws(StateError) {
        precondition(logFD >= 0, "StateStore used after close()")
        if let failure { throw .unusable(cause: failure) }
    }

    /// Writes ``pending`` at the end of the log. When the write fails, the part of it that reached the file is cut
    /// back off (a partial record followed by later ones would be damage, and whole records would come back at the
    /// next start although they were refused) and the error thrown; ``pending`` is kept. When even the cut fails,
    /// the store stops with ``hasUncertainTail``.
    private func writePending() throws(StateError) {
        guard !pending.isEmpty else { return }
        let (error, written) = pending.withUnsafeBytes { Self.writeAll($0, to: logFD, disk) }
        guard error == 0 else {
            let writeError = StateError.system(operation: "write", path: logPath, errno: error)
            // Nothing reached the file (a full disk refuses the first byte, a read-only one every byte): no cut.
            guard written > 0 else { throw writeError }
            let cutError = disk.truncateFile(logFD, to: writtenBytes)
            guard cutError == 0 else {
                hasUncertainTail = true
                failure = "\(writeError), then ftruncate \(logPath): \(errorText(cutError))"
                throw .unusable(cause: failure!)
            }
            throw writeError
        }
        writtenBytes += pending.count
        counters.bytesWritten += pending.count
        unsynced = true
        journal.removeAll(keepingCapacity: journal.capacity <= 4096)
        // A burst's buffer is not kept for ever.
        pending.removeAll(keepingCapacity: pending.capacity <= 1 << 20)
    }

    /// fdatasyncs the log when bytes were written since the last sync. When the sync fails, the store stops, and
    /// with `cuttingBackTo` the log is first cut back to that length and synced (the failed call's own records, not
    /// yet answered, must not come back at the next start); when that fails too, ``hasUncertainTail`` is set.
    private func syncLog(cuttingBackTo start: Int? = nil) throws(StateError) {
        guard unsynced else { return }
        counters.syncs += 1
        let error = disk.syncFile(logFD)
        guard error == 0 else {
            let syncError = StateError.system(operation: "fdatasync", path: logPath, errno: error)
            failure = syncError.description
            if let start, start < writtenBytes {
                let cutError = disk.truncateFile(logFD, to: start)
                let cutSyncError = cutError == 0 ? disk.syncFile(logFD) : 0
                if cutError != 0 || cutSyncError != 0 {
                    hasUncertainTail = true
                    let call = cutError != 0 ? "ftruncate" : "fdatasync"
                    failure! += ", then \(call) \(logPath): \(errorText(cutError != 0 ? cutError : cutSyncError))"
                } else {
                    writtenBytes = start
                }
            }
            throw syncError
        }
        unsynced = false
    }

    /// Makes `fd`, a compacted log just renamed over the log and synced, the log; then fsyncs the directory so the
    /// rename lasts before anything is appended to the new log. A failure of that fsync stops the store.
    func installCompactedLog(_ fd: Int32, size: Int) throws(StateError) {
        FileCalls.close(logFD)
        logFD = fd
        writtenBytes = size
        unsynced = false
        counters.bytesWritten += size
        counters.syncs += 2
        counters.compactions += 1
        let error = disk.syncDirectory(directoryFD)
        guard error == 0 else {
            let syncError = StateError.system(operation: "fsync", path: directory, errno: error)
            failure = syncError.description
            throw syncError
        }
    }

    /// Writes all of `bytes` to `fd`, going on after a partial write: 0, or the errno of the write that failed, and
    /// how many bytes were written before it.
    static func writeAll(
        _ bytes: UnsafeRawBufferPointer, to fd: Int32, _ disk: any StateDisk
    ) -> (error: Int32, written: Int) {
        var done = 0
        while done < bytes.count {
            let written = disk.write(fd, UnsafeRawBufferPointer(rebasing: bytes[done...]))
            if written < 0 { return (Int32(-written), done) }
            // write(2) of a regular file returns 0 only for 0 bytes; anything else would loop for ever.
            if written == 0 { return (EIO, done) }
            done += written
        }
        return (0, done)
    }
}
