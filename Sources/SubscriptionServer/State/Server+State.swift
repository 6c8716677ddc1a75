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
/// - A publication to a retained number is buffered; ``EventLoop/beforeOutput`` commits the turn's values (one
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
        for number in recovered.numbers {
            do {
                try center.create(number.name, retained: number.kind == .retained)
            } catch {
                throw ConfigurationError(
                    key: "max_numbers", problem: "cannot restore '\(number.name)' from \(store.logPath): \(error)")
            }
        }
        for value in recovered.values.values {
            let message = Publication.make(
                number: value.number, sender: value.sender, revision: value.revision, info: value.info,
                payload: value.payload)
            try center.restoreRetainedValue(of: value.number, revision: value.revision, value: message, sender: value.sender)
        }
        if let truncation = report.truncation {
            logger.warning(
                "state: cut a write torn by a crash off the end of the log",
                metadata: ["path": "\(report.path)", "offset": "\(truncation.offset)", "bytes": "\(truncation.bytes)",
                           "reason": "\(truncation.reason)"])
        }
        logger.info("\(report.description)")
        opened = nil
        state = store
        loop.beforeOutput = { [unowned self] in self.commitState() }
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
        do {
            try state.numberRemoved(number)
        } catch {
            throw stateFailed(error)
        }
    }

    /// Buffers a retained number's new value; it reaches the log at ``commitState()``.
    func saveValue(
        of number: String, revision: UInt64, sender: String?, info: [InfoPair], payload: ArraySlice<UInt8>
    ) {
        guard let state else { return }
        do {
            try state.valuePublished(StoredValue(
                number: number, revision: revision, sender: sender, info: info, payload: Array(payload)))
        } catch {
            reportStateFailure(error)
        }
    }

    /// The turn's buffered values written (and, with `fsync: turn`, synced) before its replies go out.
    func commitState() {
        guard let state, state.hasUncommittedRecords else { return }
        do {
            try state.endOfTurn()
        } catch {
            reportStateFailure(error)
        }
    }

    /// Once a second from housekeeping: the sync of `fsync: everysec`, and a compaction when the log has grown to
    /// several times what it holds.
    func maintainState() {
        guard let state else { return }
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
                    logger.info("state: log compacted", metadata: [
                        "before": "\(report.bytesBefore)", "after": "\(report.bytesAfter)"])
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
        loop.beforeOutput = nil
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
            logger.critical("state: cannot save to state_dir; changes to numbers are refused from now on: \(error)")
        }
    }
}
