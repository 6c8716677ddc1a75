import SubscriptionCenter
import SubscriptionCommands
import SubscriptionProtocol
import SubscriptionWire

/// The server's side of the cluster bridge: what the handlers tell it (interest kept as the center's subscriptions
/// change) and what it applies for the other nodes (numbers created and removed there, their publications). All on
/// the server's queue. Nothing here runs without `cluster:` (``Server/cluster`` is nil).
extension Server {
    // MARK: Interest, as the center's subscriptions change

    /// A session's subscription to `pattern` is new (in queue group `group`, or in none): one more holder of the
    /// pattern, or of the pattern in that group, upstream.
    func clusterInterestAdded(_ pattern: String, group: String?) {
        guard let cluster else { return }
        if let group { cluster.groupInterestAdded(pattern, group: group) } else { cluster.interestAdded(pattern) }
    }

    /// A session's subscription to `pattern` (in `group`, or in none) ended.
    func clusterInterestRemoved(_ pattern: String, group: String?) {
        guard let cluster else { return }
        if let group { cluster.groupInterestRemoved(pattern, group: group) } else { cluster.interestRemoved(pattern) }
    }

    /// A session subscribed again to a pattern it held (`SUB` of the same pattern replaces its filter and group): when
    /// the group changed, the subscription's interest moves from the old group (or none) to the new one.
    func clusterInterestMoved(_ pattern: String, from old: String?, to new: String?) {
        // Group names are bytes, as the center compares them.
        guard let cluster, old.map({ ExactName($0) }) != new.map({ ExactName($0) }) else { return }
        if let old { cluster.groupInterestRemoved(pattern, group: old) } else { cluster.interestRemoved(pattern) }
        if let new { cluster.groupInterestAdded(pattern, group: new) } else { cluster.interestAdded(pattern) }
    }

    /// A session leaves the center: each of its subscriptions ends. Called before the center forgets them.
    func clusterSessionLeaves(_ session: Session) {
        guard cluster != nil else { return }
        for subscription in center.subscriptions(of: session) {
            clusterInterestRemoved(subscription.pattern, group: subscription.group)
        }
    }

    // MARK: What the other nodes did

    /// A number exists in the cluster (a create seen in the shared bucket, here or elsewhere): it exists here too,
    /// `retained` or plain (an existing number keeps its kind), saved with the state directory and told on
    /// `$SYS.number.created` when it is new to this node. Returns true when it was new here. A name this node cannot
    /// hold (its `max_numbers`) is logged and skipped.
    @discardableResult
    package func applyClusterCreate(_ number: String, retained: Bool = false) -> Bool {
        guard !Names.isSystem(number) else { return false }
        let created: Bool
        do {
            created = try center.create(number, retained: retained)
            if created { try saveCreated(number, retained: retained) }
        } catch {
            logger.warning("cannot hold a number the cluster created: \(error)", metadata: ["number": "\(number)"])
            return false
        }
        if created {
            let kind = retained ? "retained" : "plain"
            post(
                .numberCreated,
                JSONObject([
                    ("number", .string(number)), ("kind", .string(kind)),
                    ("origin", .string("cluster")),
                ]))
            mqttNumberCreated(number)
        }
        return created
    }

    /// A number was removed in the cluster: it goes here too, its exact subscribers are told `GONE`, and they are
    /// counted as they would be for a local `REMOVE`. Returns how many were told (0 when it was not here).
    @discardableResult
    package func applyClusterRemove(_ number: String) -> Int {
        guard !Names.isSystem(number), center.contains(number) else { return 0 }
        do {
            try saveRemoved(number)
            let ended = center.exactSubscriptionGroups(of: number)
            let told = try center.remove(number)
            for group in ended { clusterInterestRemoved(number, group: group) }
            post(
                .numberRemoved,
                JSONObject([
                    ("number", .string(number)), ("subscribers_told", .integer(Int64(told.count))),
                    ("origin", .string("cluster")),
                ]))
            return told.count
        } catch {
            logger.warning("cannot remove a number the cluster removed: \(error)", metadata: ["number": "\(number)"])
            return 0
        }
    }

    /// A publication made on another node: fanned out through the center to `audience` as a local one is (each
    /// session at most once, `from=` filters applied), counted as delivered, never sent upstream again. The copy of a
    /// plain upstream subscription serves ``Audience/plainOnly``, the copy of a queue group's queue subscription
    /// ``Audience/group(_:)`` (docs/CLUSTER.md, step 3). Returns the receivers; 0 for a number this node does not
    /// hold, for the daemon's own numbers (never bridged), and for a retained number (a shared one's publications
    /// travel through the retained bucket, ``applyClusterRetained(_:revision:sender:info:payload:)``; one this node
    /// restored from its `state_dir` alone keeps its revisions this node's).
    @discardableResult
    package func deliverFromCluster(
        to number: String, sender: String?, info: [InfoPair], audience: Audience, payload: UnsafeRawBufferPointer
    ) -> Int {
        guard !Names.isSystem(number) else { return 0 }
        if case .some(.some) = try? center.retainedSlot(of: number) { return 0 }
        let receivers: Int
        var groupsMet: [String] = []  // what the publishing node reports; not needed here
        do {
            receivers = try center.send(to: number, from: sender, audience: audience, groupsMet: &groupsMet) {
                (_: UInt64?) -> Publication in
                Publication.make(number: number, sender: sender, info: info, payload: payload)
            }
        } catch {
            return 0
        }
        stats.messagesDelivered += UInt64(receivers)
        return receivers
    }

    /// Runs `work` at the end of this turn, before the turn's writes to sessions (the bridge sends its publications
    /// upstream there, ahead of the replies and deliveries).
    package func atEndOfTurn(_ work: @escaping () -> Void) {
        loop.atEndOfTurn(work)
    }

    /// Ends the turn: the deferred `$SYS` notifications, then one flush per session that got output. The bridge calls
    /// it after each thing it applied.
    package func endClusterTurn() {
        loop.endOfTurn()
    }

    /// `max_payload` in force: the bridge checks that NATS carries a publication that large.
    package var configuredMaxPayload: Int { configuration.maxPayload }

    /// The numbers `numbers:` creates at start, which the bridge creates in the shared bucket too.
    package var configuredNumbers: [String] { configuration.numbers }
}
