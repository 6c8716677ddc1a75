import SubscriptionNATS
import SubscriptionServer
import SubscriptionWire

/// Publications between nodes (docs/CLUSTER.md, "The message path"): each local publication to a plain number goes
/// upstream once; each pattern the node's sessions hold outside queue groups is one upstream subscription, whose
/// copies are fanned out to this node's subscribers outside groups once per publication (the groups are served
/// through their queue subscriptions, `ClusterBridge+Groups.swift`). `$SYS.` is never bridged.
extension ClusterBridge {
    /// Publishes once upstream on `subd.m.<number>` with this node's next counter, the queue groups served here and,
    /// with `ack: all`, the reply subject its confirmations come to (the ticket returned when the `+OK` is to wait for
    /// them); a publication NATS does not take (its buffer full, over its `max_payload`, closed) is counted in
    /// ``dropped`` (STATS `cluster_dropped`) and logged at debug. (`$SYS.` numbers never come here: `CommandPolicy`
    /// refuses a client's publication to them, and the daemon's own notifications do not go through
    /// `PublishCommand`.)
    public func published(
        to number: String, sender: String?, info: [InfoPair], groups: [String], payload: ArraySlice<UInt8>
    ) -> UInt64? {
        counter += 1
        // Headers only for a publication with a sender, info pairs or groups: in a batch, one without them is the
        // batch's origin and next counter (``PublicationBatch``).
        let headers: NATSHeaders? =
            sender == nil && info.isEmpty && groups.isEmpty
            ? nil : BridgeHeaders.encode(origin: origin, counter: counter, sender: sender, info: info, groups: groups)
        let limit = (client.serverInfo?.maxPayload).map { $0 / 2 } ?? PublicationBatch.maxBytes
        if !batch.accepts(number, counter: counter, headers: headers, payloadBytes: payload.count, limit: limit) {
            sendBatch()
            // A batch's worth queued (a full batch) is written while the rest of the read is run; smaller ones (a
            // change of number) wait for the end of the turn, one write for them all.
            if client.pendingByteCount >= PublicationBatch.maxBytes { client.flushNow() }
        }
        if !isBatchSendScheduled {
            isBatchSendScheduled = true
            // At the end of the session's turn, before its replies and deliveries are written, so the publications
            // leave first; the queue's next step sends them if no end of turn comes first.
            server.atEndOfTurn { [self] in sendScheduledBatch() }
            server.queue.async { [self] in sendScheduledBatch() }
        }
        batch.append(to: number, origin: origin, counter: counter, headers: headers, payload: payload)
        return waitsForConfirmations ? expectConfirmations(of: counter, to: number, served: groups) : nil
    }

    /// The batch the end of a turn was to send, sent and written to NATS now (once, whichever of the two calls comes
    /// first: ``published(to:sender:info:groups:payload:)``), with the batches sent before it in the turn.
    private func sendScheduledBatch() {
        guard isBatchSendScheduled else { return }
        isBatchSendScheduled = false
        acks.endPublicationTurn()
        sendBatch()
        client.flushNow()
    }

    /// Sends the publications batched so far (``PublicationBatch``) as one message: at the end of the turn that made
    /// them (before its writes to sessions), or before a publication that cannot join them. One NATS does not take
    /// (its buffer full, over its `max_payload`, closed) is counted in ``dropped`` (STATS `cluster_dropped`), each of
    /// its publications, and logged at debug; their `+OK`, if it waits, is answered at `ack_timeout`.
    func sendBatch() {
        guard let (number, headers, payload) = batch.take() else { return }
        let count = headers[PublicationBatch.header].flatMap { Int($0) } ?? 1
        do throws(NATSError) {
            try client.publish(
                subject: BridgeHeaders.subject(of: number), replyTo: confirmationSubject, headers: headers,
                payload: payload)
        } catch {
            dropped += UInt64(count)
            logger.debug("cluster: \(count) publication(s) to \(number) not sent to the other nodes: \(error)")
        }
    }

    /// One more holder of `pattern`: subscribed upstream when it has no upstream subscription yet (its first holder,
    /// or a subscribe that failed before). `$SYS.` patterns never.
    public func interestAdded(_ pattern: String) {
        guard !Names.isSystem(pattern) else { return }
        if interest.add(pattern) == .subscribe { interestChanged() }
        if upstream[ExactName(pattern)] == nil { subscribeUpstream(pattern) }
    }

    /// The pattern's last holder unsubscribes upstream.
    public func interestRemoved(_ pattern: String) {
        guard !Names.isSystem(pattern), interest.remove(pattern) == .unsubscribe else { return }
        interestChanged()
        if let sid = upstream.removeValue(forKey: ExactName(pattern)) { client.unsubscribe(sid) }
    }

    /// The counters STATS shows.
    public var statistics: ClusterStatistics { ClusterStatistics(dropped: dropped, received: received) }

    /// Subscribes upstream to a held pattern. When the client refuses (only a subject it cannot send, or a client
    /// closed at shutdown), the pattern stays held without a subscription and is tried again by its next holder and
    /// at the next connect (``subscribeMissingUpstream()``).
    private func subscribeUpstream(_ pattern: String) {
        do throws(NATSError) {
            upstream[ExactName(pattern)] = try client.subscribe(subject: BridgeHeaders.subject(of: pattern)) {
                [self] message in
                received(message)
            }
        } catch {
            logger.warning(
                "cluster: cannot subscribe upstream to \(pattern) (tried again at the next connect): \(error)")
        }
    }

    /// At each connect: every pattern and group held without an upstream subscription is subscribed (the others the
    /// client sends again itself).
    func subscribeMissingUpstream() {
        for pattern in interest.holders.keys where upstream[pattern] == nil { subscribeUpstream(pattern.string) }
        subscribeMissingGroups()
    }

    /// A publication of another node on one of the plain upstream subscriptions: the first copy is delivered to this
    /// node's subscribers outside queue groups, the others (overlapping patterns) are dropped by their origin's
    /// counter.
    private func received(_ message: NATSMessage) {
        var confirmations = ConfirmationBatch()
        forEachArrival(in: message) { number, parts, _, payload in
            guard origins.accept(origin: parts.origin, counter: parts.counter) else { return }
            let receivers = payload.withUnsafeBytes { payload in
                server.deliverFromCluster(
                    to: number, sender: parts.sender, info: parts.info, audience: .plainOnly, payload: payload)
            }
            if message.replyTo != nil { confirmations.add(parts.counter, receivers: receivers, group: nil) }
        }
        if let replyTo = message.replyTo { confirm(confirmations, to: replyTo) }
        scheduleTurnEnd()
    }

    /// Each publication a copy carries (a batch's, in order: ``PublicationBatch``), once checked to be a node's (one
    /// that is not is skipped, and logged at debug): its number, what its headers say, its headers (nil for a
    /// batch's publication that has none), its payload. Counted in ``received`` when it is the first copy of its
    /// publication to arrive here.
    func forEachArrival(
        in message: NATSMessage,
        _ body: (
            _ number: String, _ parts: BridgeHeaders.Parts, _ headers: NATSHeaders?, _ payload: ArraySlice<UInt8>
        ) -> Void
    ) {
        guard let number = BridgeHeaders.number(ofSubject: message.subject), !Names.isSystem(number),
            let publications = PublicationBatch.publications(of: message)
        else {
            logger.debug("cluster: ignored a message on \(message.subject) that no node sent")
            return
        }
        for publication in publications {
            guard let parts = publication.parts else {
                logger.debug("cluster: ignored a publication on \(message.subject) that no node sent")
                continue
            }
            if arrivals.accept(origin: parts.origin, counter: parts.counter) { received += 1 }
            body(number, parts, publication.headers, publication.payload)
        }
    }
}
