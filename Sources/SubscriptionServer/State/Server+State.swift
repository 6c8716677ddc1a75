import Dispatch
import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionState
import SubscriptionWire

/// The server's side of `state_dir` (issue 9, "State that survives"): what is restored at start, what each change
/// writes, and when it reaches the disk. The log itself (format, checksums, torn writes, compaction) is
/// ``StateStore``'s.
///
/// - `CREATE` and `REMOVE` (and numbers a reload creates) are on disk, fdatasync'd, before their `+OK`: the record
///   is written before the number is removed, and right after it is created (undone if the write fails).
/// - A publication to a retained number is staged (State/Server+Staging.swift): ``EventLoop/stateCommit`` writes the
///   turn's values together (and syncs them once, `fsync: turn`, or leaves the sync to the once-a-second housekeeping,
///   `fsync: everysec`), and only then are they made current, delivered and answered; `-ERR LIMIT` when they could
///   not be written.
/// - A failed write (a full disk) is undone and tried again by the next change; a failed sync stops saving until a
///   restart (``StateSaving/Health``).
/// - The daemon's own `$SYS.` numbers are never saved: they are made at every start.
extension Server {
    /// Opens `state_dir` and puts back the numbers and retained values it holds, before the configured numbers are
    /// created. Throws the store's one-line error (a corrupt log names the file and the offset) or the center's.
    func restoreState() throws {
        guard let directory = configuration.stateDirectory else { return }
        let (store, recovered, report) = try StateStore.open(directory: directory, policy: configuration.fsync)
        var opened: StateStore? = store
        defer { if let opened { try? opened.close() } }
        // Everything saved comes back, even over max_numbers (a reload may have lowered it): a restart must not
        // fail on numbers the daemon once accepted. New ones are refused until there is room again.
        let limits = center.limits
        center.limits.maxNumbers = .max
        defer { center.limits = limits }
        for number in recovered.numbers {
            do {
                try center.create(number.name, retained: number.kind == .retained)
            } catch {
                throw ConfigurationError(
                    key: "state_dir", problem: "cannot restore '\(number.name)' from \(store.logPath): \(error)")
            }
        }
        if center.clientNumberCount > limits.maxNumbers {
            logger.warning(
                "state: more numbers were restored than max_numbers allows; CREATE is refused until some are removed",
                metadata: ["numbers": "\(center.clientNumberCount)", "max_numbers": "\(limits.maxNumbers)"])
        }
        for value in recovered.values.values {
            let message = Publication.make(
                number: value.number, sender: value.sender, revision: value.revision, info: value.info,
                payload: value.payload)
            try center.restoreRetainedValue(
                of: value.number, revision: value.revision, value: message, sender: value.sender)
        }
        if let truncation = report.truncation {
            logger.warning(
                "state: cut a write torn by a crash off the end of the log",
                metadata: [
                    "path": "\(report.path)", "offset": "\(truncation.offset)", "bytes": "\(truncation.bytes)",
                    "reason": "\(truncation.reason)",
                ])
        }
        logger.info("\(report.description)")
        opened = nil
        state = store
        savesState = true
        loop.stateCommit = (
            isPending: { [unowned self] in self.hasStateWork },
            commit: { [unowned self] in self.commitState() }
        )
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1))
        timer.setEventHandler { [unowned self] in
            self.maintainState()
            self.loop.endOfTurn()  // a failure's $SYS event goes out now
        }
        stateTimer = timer
        timer.resume()
    }

    /// Makes a number a client (or a reload) created durable. On failure the number is removed again and the
    /// error is the reply: nothing was created.
    func saveCreated(_ number: String, retained: Bool) throws(ProtocolError) {
        guard let state else { return }
        if let refusal = stateRefusal {
            _ = try? center.remove(number)
            throw refusal
        }
        do {
            try state.numberCreated(number, kind: retained ? .retained : .plain)
        } catch {
            _ = try? center.remove(number)
            throw stateFailed(error)
        }
        reportStateSaved()
    }

    /// Makes a removal durable, before the number is removed from the center. On failure nothing is removed. The
    /// values staged before it are saved and published first, so none of them lands on the number after it is gone
    /// (or on a number of the same name created after it).
    func saveRemoved(_ number: String) throws(ProtocolError) {
        guard let state, center.contains(number) else { return }
        if !saving.staged.isEmpty { commitState() }
        if let refusal = stateRefusal { throw refusal }
        do {
            try state.numberRemoved(number)
        } catch {
            throw stateFailed(error)
        }
        reportStateSaved()
    }

    /// After a failed sync, the error every change that must be saved gets (until a restart); nil while saving works
    /// or only writes failed (each change tries again).
    var stateRefusal: ProtocolError? {
        guard let state, !state.isUsable else { return nil }
        return ProtocolError(.limit, "the state could not be saved (see the log); changes are refused until a restart")
    }

    /// Buffers the value of a retained number that the cluster's bucket stored (the bucket is its first copy); it
    /// reaches the log with the turn's commit.
    func saveValue(
        of number: String, revision: UInt64, sender: String?, info: [InfoPair], payload: ArraySlice<UInt8>
    ) {
        guard let state else { return }
        do {
            // Current already (the bucket has it): a failed write does not take it back from the index.
            try state.valuePublished(
                number, revision: revision, sender: sender, info: info, payload: payload, staged: false)
        } catch {
            reportStateFailure(error)
        }
    }

    /// Once a second from housekeeping: the sync of `fsync: everysec`, and a compaction when the log has grown to
    /// several times what it holds. A compaction that fails leaves the log as it was (and is tried again a second
    /// later); it is logged once, not once a second, and stops saving only when it left the store unusable.
    func maintainState() {
        guard let state, state.isUsable else { return }
        do {
            if configuration.fsync == .everySecond { try state.commit() }
        } catch {
            reportStateFailure(error)
            return
        }
        guard state.needsCompaction else { return }
        do {
            let report = try state.compactIfNeeded { [center] number in
                guard let slot = try? center.retainedSlot(of: number), let value = slot.value else { return nil }
                return StoredValue(
                    number: number, revision: slot.revision, sender: value.sender, info: value.info,
                    payload: value.payload)
            }
            saving.compactionFailing = false
            if let report {
                logger.info(
                    "state: log compacted",
                    metadata: ["before": "\(report.bytesBefore)", "after": "\(report.bytesAfter)"])
            }
        } catch {
            if !state.isUsable {
                reportStateFailure(error)
            } else if !saving.compactionFailing {
                saving.compactionFailing = true
                logger.error(
                    "state: the log could not be compacted; it goes on growing, and compaction is tried every second",
                    metadata: ["error": "\(error)"])
            }
        }
    }

    /// At the end of the drain: the values staged last saved and answered, the last values synced, the log closed.
    func closeState() {
        stateTimer?.cancel()
        stateTimer = nil
        guard let state else { return }
        commitState()
        self.state = nil
        savesState = false
        loop.stateCommit = nil
        do {
            try state.close()
        } catch {
            reportStateFailure(error)
        }
    }
}
