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
        guard settings.ack == .all, acks.confirmationsSID == nil else { return }
        do throws(NATSError) {
            acks.confirmationsSID = try client.subscribe(subject: BridgeHeaders.ackSubject(of: origin)) { [self] in
                confirmationArrived($0)
            }
        } catch {
            logger.warning("cluster: cannot subscribe to confirmations; +OK counts this node's receivers: \(error)")
        }
    }

    /// The reply subject of this node's publications: nil with `ack: local` (nobody confirms).
    var confirmationSubject: String? {
        acks.confirmationsSID == nil ? nil : BridgeHeaders.ackSubject(of: origin)
    }

    /// Publication `counter` to `number` went upstream with the reply subject, this node having served `served`
    /// groups itself: its ticket when the `+OK` is to wait (some other node's plain interest matches it, or a group
    /// not served here has a matching pattern on another node), nil when it answers now (nobody expected, NATS not
    /// connected, or ``PendingAcks/limit`` waiting already).
    func expectConfirmations(of counter: UInt64, to number: String, served: [String]) -> UInt64? {
        guard client.isConnected else { return nil }
        let now = ClusterAcks.now()
        let nodes = acks.directory.expected(for: number, now: now)
        var groups = acks.directory.expectedGroups(for: number, now: now)
        for group in served { groups.remove(ExactName(group)) }
        guard !nodes.isEmpty || !groups.isEmpty, acks.pending.expect(counter, from: nodes, groups: groups) else {
            return nil
        }
        server.countClusterAck(.waited)
        server.queue.asyncAfter(deadline: .now() + settings.ackTimeout.dispatchInterval) { [self] in
            timedOut(counter)
        }
        return counter
    }

    /// Gives `answer` the other nodes' receivers of publication `ticket`, once known.
    public func confirmations(of ticket: UInt64, answer: @escaping @Sendable (Int) -> Void) {
        if let receivers = acks.pending.attach(answer, to: ticket) { answer(receivers) }
    }

    /// The timeout of publication (or bucket write) `ticket`: answered with the receivers confirmed so far.
    func timedOut(_ ticket: UInt64) {
        guard let (answer, receivers) = acks.pending.expire(ticket) else { return }
        server.countClusterAck(.timedOut)
        answer?(receivers)
    }

    /// A node's confirmation.
    private func confirmationArrived(_ message: NATSMessage) {
        guard let (counter, node, receivers, group) = BridgeHeaders.decodeConfirmation(message.payload) else {
            logger.debug("cluster: ignored a confirmation that no node sent")
            return
        }
        switch acks.pending.confirm(counter, by: node, group: group, receivers: receivers) {
        case .counted, .duplicate: break
        case .complete(let answer, let total): answer(total)
        case .late: server.countClusterAck(.late)
        }
    }

    /// This node delivered publication `counter` of another node to `receivers` sessions (through the copy of its
    /// plain subscription, or with `group` through that group's): confirms it to `subject` (the publication's reply
    /// subject, when its node waits).
    func confirm(_ counter: UInt64, receivers: Int, to subject: String, group: String? = nil) {
        guard subject.hasPrefix(BridgeHeaders.ackPrefix) else { return }
        let payload = BridgeHeaders.encodeConfirmation(
            counter: counter, origin: origin, receivers: receivers, group: group)
        do throws(NATSError) {
            try client.publish(subject: subject, payload: payload)
        } catch {
            logger.debug("cluster: a confirmation was not sent: \(error)")
        }
    }
}

extension Duration {
    /// This duration for Dispatch (nanoseconds).
    var dispatchInterval: DispatchTimeInterval {
        let (seconds, attoseconds) = components
        return .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}
