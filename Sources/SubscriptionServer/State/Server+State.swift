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
/// - A publication to a retained number is buffered; ``EventLoop/stateCommit`` commits the turn's values (one
///   fdatasync, `fsync: turn`) before any reply of the turn is written, or writes them and leaves the sync to the
///   once-a-second housekeeping (`fsync: everysec`).
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
        loop.stateCommit = (
            isPending: { [unowned self] in self.state?.hasUncommittedRecords ?? false },
            commit: { [unowned self] in self.commitState() }
        )
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1))
        timer.setEventHandler { [unowned self] in self.maintainState() }
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
    }

    /// Makes a removal durable, before the number is removed from the center. On failure nothing is removed.
    func saveRemoved(_ number: String) throws(ProtocolError) {
        guard let state, center.contains(number) else { return }
        if let refusal = stateRefusal { throw refusal }
        do {
            try state.numberRemoved(number)
        } catch {
            throw stateFailed(error)
        }
    }

    /// After a failed save, the error every change that must be saved gets (until a restart); nil while saving works.
    var stateRefusal: ProtocolError? {
        guard state != nil, stats.stateFailures > 0 else { return nil }
        return ProtocolError(.limit, "the state could not be saved (see the log); changes are refused until a restart")
    }

    /// Throws ``stateRefusal`` for a publication to a retained number, which would have to be saved. Cheap when
    /// saving works (one comparison), so the publish path may call it every time.
    func checkStateAccepts(publicationTo number: String) throws(ProtocolError) {
        guard stats.stateFailures > 0, let refusal = stateRefusal,
            case .some(.some) = try? center.retainedSlot(of: number)
        else { return }
        throw refusal
    }

    /// Buffers a retained number's new value; it reaches the log at ``commitState()``.
    func saveValue(
        of number: String, revision: UInt64, sender: String?, info: [InfoPair], payload: ArraySlice<UInt8>
    ) {
        guard let state else { return }
        do {
            try state.valuePublished(
                StoredValue(
                    number: number, revision: revision, sender: sender, info: info, payload: Array(payload)))
        } catch {
            reportStateFailure(error)
        }
    }

    /// The turn's buffered values written (and, with `fsync: turn`, synced) before its replies go out.
    func commitState() {
        // After a failure nothing more is written (changes are refused until a restart): no write retried per turn.
        guard let state, state.hasUncommittedRecords, stats.stateFailures == 0 else { return }
        do {
            try state.endOfTurn()
        } catch {
            reportStateFailure(error)
        }
    }

    /// Once a second from housekeeping: the sync of `fsync: everysec`, and a compaction when the log has grown to
    /// several times what it holds.
    func maintainState() {
        guard let state, stats.stateFailures == 0 else { return }
        do {
            if configuration.fsync == .everySecond { try state.commit() }
            if state.needsCompaction {
                let report = try state.compactIfNeeded { [center] number in
                    guard let slot = try? center.retainedSlot(of: number), let value = slot.value else { return nil }
                    return StoredValue(
                        number: number, revision: slot.revision, sender: value.sender, info: value.info,
                        payload: value.payload)
                }
                if let report {
                    logger.info(
                        "state: log compacted",
                        metadata: [
                            "before": "\(report.bytesBefore)", "after": "\(report.bytesAfter)",
                        ])
                }
            }
        } catch {
            reportStateFailure(error)
        }
    }

    /// At the end of the drain: the last values synced, the log closed.
    func closeState() {
        stateTimer?.cancel()
        stateTimer = nil
        guard let state else { return }
        self.state = nil
        loop.stateCommit = nil
        do {
            try state.close()
        } catch {
            reportStateFailure(error)
        }
    }

    /// The reply to a change that could not be saved.
    private func stateFailed(_ error: StateError) -> ProtocolError {
        reportStateFailure(error)
        return ProtocolError(.limit, "the state could not be saved: \(error)")
    }

    /// Logged once at critical (the store refuses every change after a failed sync), counted each time.
    private func reportStateFailure(_ error: StateError) {
        stats.stateFailures += 1
        if stats.stateFailures == 1 {
            logger.critical(
                "state: cannot save to state_dir; CREATE, REMOVE and retained publications refused until a restart",
                metadata: ["error": "\(error)"])
        }
    }
}
