import SubscriptionCenter
import SubscriptionCommands
import SubscriptionProtocol
import SubscriptionState
import SubscriptionWire

/// Saved before seen (docs/STATE.md, "When a change is on disk"): with a state directory, a publication to a retained
/// number is *staged*. Its revision is decided, its frame made and its record buffered in the store, and nothing else
/// happens: the center keeps the saved value, no subscriber is sent it, no reply is queued. At the end of the turn
/// (``EventLoop/stateCommit``, or before a `REMOVE`) the store writes the turn's values together (one write, and under
/// `fsync: turn` one fdatasync); then each value is made current, delivered and answered `+OK <receivers>`, in the
/// order of the publications. When the write or the sync fails, each is answered `-ERR LIMIT` instead and the store
/// forgets them, so what `GET` and subscribers see is always what the disk has.
///
/// A session with staged values goes on staging its next publications to retained numbers (a pipelining publisher
/// pays one sync per turn, not one per value), and any other command of it waits until they are answered, so its
/// replies keep their order and a command behind a value sees it.
extension Server {
    /// Stages a publication to a retained number and returns ``Reply/staged``; nil, having done nothing, when the
    /// publication is not staged: a plain number, one that does not exist (the caller answers `NOTFOUND`, or looks
    /// it up in the cluster), a retained number the cluster shares (its bucket saves it). Throws ``stateRefusal``
    /// for a retained number once saving stopped.
    func stage(
        _ number: String, payload: ArraySlice<UInt8>, info: [InfoPair], sender: String?, for session: Session
    ) throws(ProtocolError) -> Reply? {
        guard let state, let revision = try stagingRevision(of: number, in: state) else { return nil }
        do {
            try state.valuePublished(number, revision: revision, sender: sender, info: info, payload: payload)
        } catch {
            throw stateFailed(error)
        }
        let publication = payload.withUnsafeBytes {
            Publication.make(number: number, sender: sender, revision: revision, info: info, payload: $0)
        }
        if isPublishingMQTT { attachMQTT(to: publication) }
        saving.staged.append(
            .init(session: session, number: number, revision: revision, sender: sender, publication: publication))
        session.stagedValues += 1
        return .staged
    }

    /// The revision a value staged now for `number` gets: the one after its last value, staged or saved. Nil when
    /// its publications are not staged (see ``stage(_:payload:info:sender:for:)``).
    private func stagingRevision(of number: String, in state: StateStore) throws(ProtocolError) -> UInt64? {
        guard case .some(.some(let saved)) = try? center.retainedRevision(of: number) else { return nil }
        if let refusal = stateRefusal { throw refusal }
        if isClustered, let cluster, cluster.sharesRetained(number) { return nil }
        // The store's revision counts the values staged this turn; the center's is the last published. They agree
        // otherwise, and the higher one keeps the store's rule (each revision above the last) whatever happened.
        return max(saved, state.lastRevision(of: number) ?? 0) + 1
    }

    /// True while the end of the turn has saving to do: values staged, records to write or sync.
    var hasStateWork: Bool {
        !saving.staged.isEmpty || state?.needsEndOfTurn == true
    }

    /// Writes (and under `fsync: turn` syncs) what the turn buffered, then answers the staged values: published and
    /// `+OK <receivers>` when that worked; `-ERR LIMIT` (the store forgets them) when it failed; no answer at all, the
    /// publisher's connection closed after its earlier replies, when the failure left it unknown whether they are on
    /// disk (``StateStore/hasUncertainTail``). Sessions with a command waiting go on at the next turn.
    func commitState() {
        guard let state else { return }
        var values = saving.takeStaged()
        defer { saving.giveBack(&values) }
        var failure: StateError? = nil
        if !values.isEmpty || state.needsEndOfTurn {
            do {
                try state.endOfTurn()
                reportStateSaved()
            } catch {
                failure = error
                state.discardUnwritten()
                reportStateFailure(error)
            }
        }
        for value in values {
            let session = value.session
            session.stagedValues -= 1
            // A value is published once saved even when its publisher has gone meanwhile: the disk has it.
            if let failure {
                refuse(value, failure, uncertain: state.hasUncertainTail)
            } else {
                publish(value)
            }
            if session.stagedValues == 0 && session.hasWaitingCommand { resumeOnNextTurn(session) }
        }
    }

    /// A session whose staged values (or replies in flight) were answered runs the command that waited, and those
    /// behind it, on the loop's next turn: after the others' events, so a session that alternates retained
    /// publications with other commands (one sync each time) does not hold the loop for a whole read's worth of syncs.
    func resumeOnNextTurn(_ session: Session) {
        loop.queue.async { [loop] in
            session.runWaitingCommand()
            loop.endOfTurn()
        }
    }

    /// A saved value made current and delivered; the publisher told how many received it.
    private func publish(_ value: StateSaving.StagedValue) {
        let receivers: Int
        do throws(CenterError) {
            receivers = try center.send(to: value.number, from: value.sender, atRevision: value.revision) { _ in
                value.publication
            }
        } catch {
            // Not reached: a REMOVE saves and publishes the staged values before the number goes.
            if value.session.machine.phase != .closed { value.session.queueError(ProtocolError(error)) }
            return
        }
        stats.messagesPublished += 1
        stats.messagesDelivered += UInt64(receivers)
        numberCounters.published(to: value.number)
        if value.session.machine.phase != .closed { value.session.queue(.count(receivers)) }
    }

    /// A value that could not be saved: `-ERR LIMIT`, or, when it may be on disk after all, no answer.
    private func refuse(_ value: StateSaving.StagedValue, _ failure: StateError, uncertain: Bool) {
        guard value.session.machine.phase != .closed else { return }
        guard !uncertain else {
            value.session.requestClose(.unsaved)
            return
        }
        value.session.queueError(ProtocolError(.limit, "the state could not be saved: \(failure); nothing was changed"))
    }

    /// The reply to a change that could not be saved; when the failure could not be undone
    /// (``StateStore/hasUncertainTail``), it says that a restart may find the change after all.
    func stateFailed(_ error: StateError) -> ProtocolError {
        reportStateFailure(error)
        guard let state, state.hasUncertainTail else {
            return ProtocolError(.limit, "the state could not be saved: \(error); nothing was changed")
        }
        return ProtocolError(
            .limit, "the state could not be saved: \(error); not done now, but a restart may find it done (see the log)"
        )
    }

    /// Counts a failure, each time; logs it at critical and posts `$SYS.state.failed` when saving goes from working
    /// to failing, or to stopped.
    func reportStateFailure(_ error: StateError) {
        stats.stateFailures += 1
        let stopped = state.map { !$0.isUsable } ?? true
        let health: StateSaving.Health = stopped ? .stopped : .failing
        guard health != saving.health else { return }
        saving.health = health
        if stopped {
            logger.critical(
                "state: saving stopped; CREATE, REMOVE and retained publications are refused until a restart",
                metadata: ["error": "\(error)"])
        } else {
            logger.critical(
                "state: cannot write to state_dir; CREATE, REMOVE and retained publications fail until a write works",
                metadata: ["error": "\(error)"])
        }
        post(.stateFailed, JSONObject([("error", .string("\(error)")), ("stopped", .bool(stopped))]))
    }

    /// After a write that worked: when saving was failing, it works again (logged, `$SYS.state.recovered`).
    func reportStateSaved() {
        guard saving.health == .failing else { return }
        saving.health = .working
        logger.notice("state: saving works again", metadata: ["failures": "\(stats.stateFailures)"])
        post(.stateRecovered, JSONObject([("failures", .unsigned(stats.stateFailures))]))
    }
}
