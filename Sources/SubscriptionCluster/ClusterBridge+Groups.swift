import SubscriptionNATS
import SubscriptionWire

/// Queue groups across nodes (docs/CLUSTER.md, "The message path", step 3): of all the members of a group in the
/// whole cluster, one gets each publication.
///
/// - The publishing node serves every group it has a matching member of itself (local preference, as NATS does) and
///   names those groups in the `Subd-Groups` header (``published(to:sender:info:groups:payload:)``).
/// - Each node holds one NATS queue subscription per (pattern, group) its sessions hold: `subd.m.<pattern>` in queue
///   `<group>`, counted over its subscriptions (``GroupInterest``). NATS gives each publication to one of the queue's
///   subscriptions in the cluster (never the publisher's own: `echo: false`).
/// - A node that gets a copy on a group's queue subscription gives it to one of its members of that group, unless the
///   header says the group was served; a member that is also a plain subscriber of the publication is passed over,
///   as on one node (it has the copy of the plain subscription).
extension ClusterBridge {
    /// One more member subscription of `group` to `pattern`: the queue subscription is made when there is none yet,
    /// and a (pattern, group) new here goes into this node's interest entry (publishers expect the group's copy).
    public func groupInterestAdded(_ pattern: String, group: String) {
        guard !Names.isSystem(pattern) else { return }
        let key = GroupInterest.Key(pattern: pattern, group: group)
        let isNew = !groupInterest.holds(key)
        if groupInterest.add(key) { subscribeGroup(key) }
        if isNew { interestChanged() }
    }

    /// One member subscription less; the last one ends the queue subscription and leaves the interest entry.
    public func groupInterestRemoved(_ pattern: String, group: String) {
        guard !Names.isSystem(pattern) else { return }
        let key = GroupInterest.Key(pattern: pattern, group: group)
        guard groupInterest.holds(key) else { return }
        if let sid = groupInterest.remove(key) { client.unsubscribe(sid) }
        if !groupInterest.holds(key) { interestChanged() }
    }

    /// At each connect, the held (pattern, group)s whose queue subscription could not be made.
    func subscribeMissingGroups() {
        for key in groupInterest.unsubscribed { subscribeGroup(key) }
    }

    /// Subscribes `subd.m.<pattern>` in queue `<group>` (a group name is a valid NATS queue name as it is). When the
    /// client refuses, the key stays held without a subscription, tried again by its next holder and at the next
    /// connect.
    private func subscribeGroup(_ key: GroupInterest.Key) {
        do throws(NATSError) {
            let sid = try client.subscribe(subject: BridgeHeaders.subject(of: key.pattern), queue: key.group) {
                [self] message in
                received(message, for: key.group)
            }
            groupInterest.subscribed(key, sid: sid)
        } catch {
            let retry = "tried again at the next connect"
            logger.warning(
                "cluster: cannot subscribe upstream to \(key.pattern) in group \(key.group) (\(retry)): \(error)")
        }
    }

    /// A copy NATS gave this node for `group`: delivered to one member of the group here, unless the publishing node
    /// served the group or the group had this publication already (through another of its patterns here).
    private func received(_ message: NATSMessage, for group: String) {
        var confirmations = ConfirmationBatch()
        forEachArrival(in: message) { number, parts, headers, payload in
            guard groupInterest.accept(origin: parts.origin, counter: parts.counter, group: group),
                !BridgeHeaders.served(group, in: headers)
            else { return }
            let receivers = payload.withUnsafeBytes { payload in
                server.deliverFromCluster(
                    to: number, sender: parts.sender, info: parts.info, audience: .group(group), payload: payload)
            }
            // With `ack: all` the group's copy is confirmed on its own (the plain copy serves other sessions).
            if message.replyTo != nil { confirmations.add(parts.counter, receivers: receivers, group: group) }
        }
        if let replyTo = message.replyTo { confirm(confirmations, to: replyTo) }
        scheduleTurnEnd()
    }
}
