import Dispatch
import SubscriptionNATS
import SubscriptionWire

/// The cross-node `+OK <receivers>` (docs/CLUSTER.md, step 4), `ack: all`: a publication goes upstream with the reply
/// subject `subd.ack.<origin>`; each node that delivers it confirms its count there; the `+OK` waits (the session held,
/// so replies keep their order) until every node whose plain interest matches the number confirmed, and one node of
/// each matching queue group this node did not serve, or `ack_timeout`.
/// Confirmations after the answer are counted in STATS `cluster_late_acks`, never in an answer.
extension ClusterBridge {
    /// Subscribes to this node's confirmations (`ack: all`). At start, before the first connection.
    func startConfirmations() {
        guard settings.ack == .all, !waitsForConfirmations else { return }
        do throws(NATSError) {
            acks.confirmationsSID = try client.subscribe(subject: ackSubject) { [self] in
                confirmationArrived($0)
            }
        } catch {
            logger.warning("cluster: cannot subscribe to confirmations; +OK counts this node's receivers: \(error)")
        }
    }

    /// True once this node is subscribed to its confirmations (`ack: all`): its publications may wait for them.
    var waitsForConfirmations: Bool { acks.confirmationsSID != nil }

    /// The reply subject of this node's publications: nil with `ack: local` (nobody confirms).
    var confirmationSubject: String? {
        waitsForConfirmations ? ackSubject : nil
    }

    /// Publication `counter` to `number` went upstream with the reply subject, this node having served `served`
    /// groups itself: its ticket when the `+OK` is to wait (some other node's plain interest matches it, or a group
    /// not served here has a matching pattern on another node), nil when it answers now (nobody expected, NATS not
    /// connected, or ``PendingAcks/limit`` waiting already).
    func expectConfirmations(of counter: UInt64, to number: String, served: [String]) -> UInt64? {
        guard client.isConnected else { return nil }
        let now = acks.publicationClock()
        let (nodes, expectedGroups) = acks.directory.expectations(for: number, now: now)
        var groups = expectedGroups
        for group in served where !groups.isEmpty { groups.remove(ExactName(group)) }
        guard !nodes.nodes.isEmpty || !groups.isEmpty, acks.pending.expect(counter, from: nodes, groups: groups) else {
            return nil
        }
        server.countClusterAck(.waited)
        startTimeout(of: counter, now: now)
        return counter
    }

    /// Gives `answer` the other nodes' receivers of publication `ticket`, once known.
    public func confirmations(of ticket: UInt64, answer: @escaping @Sendable (Int) -> Void) {
        if let receivers = acks.pending.attach(answer, to: ticket) { answer(receivers) }
    }

    /// `ack_window`.
    public var ackWindow: Int { settings.ackWindow }

    /// `ticket` is answered after `ack_timeout` at the latest, with the receivers confirmed by then.
    func startTimeout(of ticket: UInt64, now: UInt64? = nil) {
        acks.addDeadline(of: ticket, at: (now ?? ClusterAcks.now()) + ackTimeoutNanoseconds)
        if !acks.isSweepScheduled { scheduleSweep(in: ackTimeoutNanoseconds) }
    }

    /// Sweeps the deadlines in `nanoseconds`.
    private func scheduleSweep(in nanoseconds: UInt64) {
        acks.isSweepScheduled = true
        server.queue.asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) { [self] in
            sweepDeadlines()
        }
    }

    /// The publications (and bucket writes) whose timeout passed are answered with the receivers confirmed so far
    /// (those answered before are skipped); the timer is set again for the next deadline of one still waiting.
    func sweepDeadlines() {
        acks.isSweepScheduled = false
        // Confirmations that arrived are read before a publication is answered without them: on a loaded machine the
        // timer and the socket may both be ready when the loop runs again, and the timer's turn may come first.
        if let first = acks.deadlines.first, first.deadline <= ClusterAcks.now(), acks.pending.count > 0 {
            client.readPendingInput()
        }
        let now = ClusterAcks.now()
        var answered = false
        while let first = acks.deadlines.first, first.deadline <= now {
            acks.deadlines.removeFirst()
            guard let (answer, receivers) = acks.pending.expire(first.ticket) else { continue }
            server.countClusterAck(.timedOut)
            answer?(receivers)
            answered = true
        }
        acks.dropAnsweredDeadlines()
        // At most one sweep per millisecond: a timeout is answered up to 1 ms late, and a stream of publications
        // (each with its own deadline, microseconds apart) does not set a timer each.
        if let next = acks.deadlines.first { scheduleSweep(in: max(next.deadline - now, ClusterAcks.sweepGranularity)) }
        if answered { scheduleTurnEnd() }
    }

    /// A node's confirmations (one or more, of one turn of its).
    private func confirmationArrived(_ message: NATSMessage) {
        guard let confirmations = BridgeHeaders.decodeConfirmations(message.payload) else {
            logger.debug("cluster: ignored a confirmation that no node sent")
            return
        }
        for confirmation in confirmations {
            // Counters this node has not given out yet were never published: nothing to confirm.
            let last = min(confirmation.last, counter)
            guard confirmation.counter <= last else { continue }
            let late = acks.pending.confirm(
                run: confirmation.counter, through: last, by: confirmation.origin, group: confirmation.group,
                receivers: confirmation.receivers
            ) { answer, total in
                answer(total)
                scheduleTurnEnd()
            }
            if late > 0 { server.countClusterAck(.late, times: late) }
        }
    }

    /// This node delivered publication `counter` of another node to `receivers` sessions (through the copy of its
    /// plain subscription, or with `group` through that group's): confirms it to `subject` (the publication's reply
    /// subject, when its node waits), with the turn's other confirmations to that subject
    /// (``sendConfirmations()``), or at once when the batch is large.
    func confirm(_ counter: UInt64, receivers: Int, to subject: String, group: String? = nil) {
        var one = ConfirmationBatch()
        one.add(counter, receivers: receivers, group: group)
        confirm(one, to: subject)
    }

    /// The confirmations of one message's publications (a batch's, in order) to `subject`, as
    /// ``confirm(_:receivers:to:group:)`` for each: one lookup of the subject's batch, not one per publication.
    func confirm(_ confirmations: ConfirmationBatch, to subject: String) {
        guard !confirmations.isEmpty, subject.hasPrefix(BridgeHeaders.ackPrefix) else { return }
        if acks.outgoing.isEmpty { scheduleTurnEnd() }
        if acks.outgoing[subject] == nil { acks.outgoing[subject] = ConfirmationBatch() }
        // Changed in place (a copy taken out and put back would copy its runs).
        let index = acks.outgoing.index(forKey: subject)!
        acks.outgoing.values[index].add(confirmations)
        var full: [ConfirmationBatch] = []
        while let first = acks.outgoing.values[index].takeFull() { full.append(first) }
        if acks.outgoing.values[index].isEmpty { acks.outgoing.remove(at: index) }
        for batch in full { send(batch.encode(origin: origin), to: subject) }
    }

    /// Sends the turn's confirmations, one message per subject, and writes them to NATS at once: at the end of the
    /// turn, before its deliveries are written to this node's sessions, since the publishing node's replies wait for
    /// them.
    func sendConfirmations() {
        guard !acks.outgoing.isEmpty else { return }
        let batches = acks.outgoing
        acks.outgoing.removeAll(keepingCapacity: true)
        for (subject, batch) in batches where !batch.isEmpty { send(batch.encode(origin: origin), to: subject) }
        client.flushNow()
    }

    private func send(_ batch: [UInt8], to subject: String) {
        do throws(NATSError) {
            try client.publish(subject: subject, payload: batch)
        } catch {
            logger.debug("cluster: confirmations were not sent: \(error)")
        }
    }
}

extension Duration {
    /// This duration in nanoseconds (0 for a negative one).
    var dispatchNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        return UInt64(max(0, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
    }
}
