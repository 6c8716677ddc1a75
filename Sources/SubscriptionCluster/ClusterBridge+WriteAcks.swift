import SubscriptionNATS
import SubscriptionWire

/// The cross-node counts of bucket writes (docs/CLUSTER.md, steps 5 and 6): a `REMOVE`'s delete and a retained
/// number's value reach the other nodes through their watches, not as publications, so with `ack: all` they carry
/// `Subd-Id` and `Subd-Ack: subd.ack.<origin>` (`BridgeHeaders+Acks.swift`) where a publication has its reply
/// subject, and are confirmed and counted as publications are (`ClusterBridge+Acks.swift`, ``PendingAcks``).
///
/// The writer expects the nodes whose entry in `subd_interest` holds a pattern matching the number, plain or in a
/// queue group (every node applies the write to its own sessions, its group members included), from before the write
/// goes (a confirmation may come before the bucket's answer), and waits at most `ack_timeout` once the bucket has
/// answered. A node confirms only what its watch saw stored live, never what a load read (a node that starts or
/// reconnects confirms nothing), and each node once per write, so no receiver is counted twice.
extension ClusterBridge {
    /// A bucket write of `number` is about to go as `ticket`: the `Subd-Ack` subject it carries (nil with `ack:
    /// local`), and whether its answer waits for confirmations (some other node holds a matching pattern, plain or in
    /// a group, and NATS is connected); then expected from now on.
    func expectWriteConfirmations(of ticket: UInt64, to number: String) -> (replyTo: String?, waits: Bool) {
        guard let replyTo = confirmationSubject else { return (nil, false) }
        guard client.isConnected else { return (replyTo, false) }
        let nodes = acks.directory.expected(for: number, now: ClusterAcks.now(), includingGroups: true)
        return (replyTo, !nodes.isEmpty && acks.pending.expect(ticket, from: nodes))
    }

    /// The bucket stored write `ticket`, which reached `local` sessions here: `answer` gets them plus the other
    /// nodes' confirmed receivers, at once when it `waits` for nobody, else once every expected node confirmed or
    /// `ack_timeout` passed (counted in STATS as a publication's wait).
    func answerWrite(_ ticket: UInt64, waits: Bool, local: Int, answer: @escaping @Sendable (Int) -> Void) {
        guard waits else { return answer(local) }
        server.countClusterAck(.waited)
        startTimeout(of: ticket)
        confirmations(of: ticket) { answer(local + $0) }
    }

    /// Write `ticket` was not stored: nobody confirms it, nothing waits for it.
    func forgetWrite(_ ticket: UInt64, waits: Bool) {
        if waits { _ = acks.pending.expire(ticket) }
    }

    /// The confirmation a bucket entry asks of this node: another node's write with `Subd-Ack`, seen live by
    /// `watcher` (nil for an entry its load read, this node's own write, or a write that asks for none).
    func confirmationAsked(by entry: KeyValueEntry, in watcher: KeyValueWatcher?) -> (counter: UInt64, subject: String)?
    {
        guard watcher?.isLoading == false, let asked = BridgeHeaders.confirmationRequest(in: entry.headers),
            asked.origin != origin
        else { return nil }
        return (asked.counter, asked.subject)
    }

    /// Confirms the `receivers` of a write that `asked`, when its writer may be waiting for this node (it
    /// `heldInterest`: a pattern matching the number, in its entry in `subd_interest`) or the count is not 0 (a
    /// node the writer does not know of yet, counted if it comes before the answer). A node with neither stays
    /// silent: its 0 would only be a late confirmation.
    func confirmWrite(
        _ asked: (counter: UInt64, subject: String), receivers: Int, heldInterest: @autoclosure () -> Bool
    ) {
        guard receivers > 0 || heldInterest() else { return }
        confirm(asked.counter, receivers: receivers, to: asked.subject)
    }

    /// True when this node's entry in `subd_interest` says it holds a pattern matching `number`, plain or in a
    /// group (an entry past its size limit says `>`).
    func holdsInterest(matching number: String) -> Bool {
        acks.entrySaysEverything
            || interest.holders.keys.contains { Names.matches(pattern: $0.string, number: number) }
            || groupInterest.holders.keys.contains { Names.matches(pattern: $0.pattern, number: number) }
    }
}
