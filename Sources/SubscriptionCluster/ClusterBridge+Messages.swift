import SubscriptionNATS
import SubscriptionWire

/// Publications between nodes (docs/CLUSTER.md, "The message path"): each local publication to a plain number goes
/// upstream once; each pattern the node's sessions hold is one upstream subscription; what arrives is fanned out
/// through the server's center once per publication. `$SYS.` is never bridged.
extension ClusterBridge {
    /// Publishes once upstream on `subd.m.<number>` with this node's next counter (and, with `ack: all`, the reply
    /// subject its confirmations come to: the ticket returned when the `+OK` is to wait for them); a publication NATS
    /// does not take (its buffer full, over its `max_payload`, closed) is counted in ``dropped`` and logged at debug.
    /// (`$SYS.` numbers never come here: `CommandPolicy` refuses a client's publication to them, and the daemon's own
    /// notifications do not go through `PublishCommand`.)
    public func published(to number: String, sender: String?, info: [InfoPair], payload: ArraySlice<UInt8>) -> UInt64? {
        counter += 1
        let headers = BridgeHeaders.encode(origin: origin, counter: counter, sender: sender, info: info)
        let replyTo = confirmationSubject
        do throws(NATSError) {
            try client.publish(
                subject: BridgeHeaders.subject(of: number), replyTo: replyTo, headers: headers, payload: payload)
        } catch {
            dropped += 1
            logger.debug("cluster: a publication to \(number) was not sent to the other nodes: \(error)")
            return nil
        }
        return replyTo == nil ? nil : expectConfirmations(of: counter, to: number)
    }

    /// The pattern's first holder subscribes upstream (`$SYS.` patterns never).
    public func interestAdded(_ pattern: String) {
        guard !Names.isSystem(pattern), interest.add(pattern) == .subscribe else { return }
        interestChanged()
        do throws(NATSError) {
            upstream[pattern] = try client.subscribe(subject: BridgeHeaders.subject(of: pattern)) { [self] message in
                received(message)
            }
        } catch {
            logger.warning("cluster: cannot subscribe upstream to \(pattern): \(error)")
        }
    }

    /// The pattern's last holder unsubscribes upstream.
    public func interestRemoved(_ pattern: String) {
        guard !Names.isSystem(pattern), interest.remove(pattern) == .unsubscribe else { return }
        interestChanged()
        if let sid = upstream.removeValue(forKey: pattern) { client.unsubscribe(sid) }
    }

    /// A publication of another node, on one of the upstream subscriptions: the first copy is delivered, the others
    /// (overlapping patterns) are dropped by their origin's counter.
    private func received(_ message: NATSMessage) {
        guard let number = BridgeHeaders.number(ofSubject: message.subject), !Names.isSystem(number),
            let parts = BridgeHeaders.decode(message.headers)
        else {
            logger.debug("cluster: ignored a message on \(message.subject) that no node sent")
            return
        }
        guard origins.accept(origin: parts.origin, counter: parts.counter) else { return }
        let receivers = message.payload.withUnsafeBytes { payload in
            server.deliverFromCluster(to: number, sender: parts.sender, info: parts.info, payload: payload)
        }
        if let replyTo = message.replyTo { confirm(parts.counter, receivers: receivers, to: replyTo) }
        scheduleTurnEnd()
    }
}
