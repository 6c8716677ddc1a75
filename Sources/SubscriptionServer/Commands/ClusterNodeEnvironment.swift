import SubscriptionCenter
import SubscriptionCommands
import SubscriptionProtocol
import SubscriptionWire

/// A cluster node's environment (docs/CLUSTER.md): as a single node's, but numbers are created and removed in the
/// shared bucket, shared retained numbers are published through theirs, a number this node does not know is looked
/// up, plain publications go to the other nodes too, and subscriptions keep the interest upstream.
/// `@unchecked Sendable`: the link, like the server and the session, is used on the loop's queue only.
struct ClusterNodeEnvironment<Client: SessionCustomer>: ServerEnvironment, @unchecked Sendable {
    let server: Server
    let session: Session
    let customer: Client
    /// The bridge to the other nodes.
    let cluster: any ClusterLink

    /// The bucket decides; the reply follows its answer. (The parser has checked the name.)
    func createShared(_ number: String, retained: Bool) -> Reply? {
        answerLater { answer in
            cluster.create(number, retained: retained) { answer($0.map { .ok($0 ? "created" : "exists") }) }
        }
    }

    /// The bucket removes, then this node does (the bridge counts the subscribers told, on every node with `ack:
    /// all`).
    func removeShared(_ number: String) -> Reply? {
        answerLater { answer in
            cluster.remove(number) { answer($0.map { .ok("removed \($0)") }) }
        }
    }

    func publishShared(_ number: String, payload: ArraySlice<UInt8>, info: [InfoPair], sender: String?) -> Reply? {
        server.publishRetainedInCluster(number, payload: payload, info: info, sender: sender, self)
    }

    /// The session is held while the bucket is asked; when it has the number (created on another node, not yet
    /// brought here by the watch) the command runs again; when the bucket was read and has no such number,
    /// `notFound` is the answer; when it cannot be read, the bridge's `LIMIT` (never `NOTFOUND` unread).
    func lookUp(
        _ number: String, notFound: ProtocolError,
        retry:
            @escaping @Sendable (inout ClientState, SubscriptionCenter<Publication>, Self) throws(ProtocolError)
            -> Reply
    ) -> Reply? {
        answerLater { answer in
            cluster.lookUp(number) { result in
                switch result {
                case .failure(let error): return answer(.failure(error))
                case .success(false): return answer(.failure(notFound))
                case .success(true): break
                }
                answer(Result { () throws(ProtocolError) in try retry(&session.client, server.center, self) })
            }
        }
    }

    /// `LIMIT` until the bridge's watches caught up, when `pattern` matches a retained number here (the numbers are
    /// listed only then: a check on a cluster node's `GET` and `SUB` only).
    func requireCaughtUp(_ pattern: String, in center: SubscriptionCenter<Publication>) throws(ProtocolError) {
        guard let refusal = cluster.notCaughtUp else { return }
        let matched = (try? center.list(matching: pattern)) ?? []
        if matched.contains(where: { $0.retainedRevision != nil }) { throw refusal }
    }

    /// The local fan-out, then, for a plain number, the publication to the other nodes, naming the queue groups
    /// served here (docs/CLUSTER.md, "The message path", step 3), with a ticket when the reply is to wait for the
    /// other nodes' receivers (step 4). A retained number this node alone holds stays here.
    func send(
        _ number: String, sender: String?, info: [InfoPair], payload: ArraySlice<UInt8>,
        in center: SubscriptionCenter<Publication>
    ) throws(CenterError) -> Delivery {
        var groupsMet: [String] = []
        var retainedRevision: UInt64? = nil
        let attaches = server.isPublishingMQTT
        let receivers = try center.send(to: number, from: sender, audience: .everyone, groupsMet: &groupsMet) {
            (revision: UInt64?) in
            retainedRevision = revision
            let publication = payload.withUnsafeBytes {
                Publication.make(number: number, sender: sender, revision: revision, info: info, payload: $0)
            }
            if attaches { server.attachMQTT(to: publication) }
            return publication
        }
        guard retainedRevision == nil else { return Delivery(receivers: receivers) }
        let ticket = cluster.published(to: number, sender: sender, info: info, groups: groupsMet, payload: payload)
        return Delivery(receivers: receivers, confirmation: ticket)
    }

    /// With `ack: all`, answered once the nodes with interest confirmed their receivers (or `ack_timeout` passed),
    /// without holding the session: its reply waits in flight, and the commands behind it run or wait as
    /// ``Server/runsAhead(_:of:)`` says; replies keep their order.
    func reply(to delivery: Delivery) -> Reply {
        guard let ticket = delivery.confirmation else { return .count(delivery.receivers) }
        let receivers = delivery.receivers
        let slot = session.replyLater()
        cluster.confirmations(of: ticket) { [server, session] remote in
            server.answerInFlight(slot, of: session, with: .success(.count(receivers + remote)))
        }
        return .later
    }

    /// Subscribes, then keeps the interest upstream: one more holder when new; when it replaced a subscription of
    /// another queue group, the interest moves.
    func subscribe(
        _ pattern: String, from: String?, group: String?, in center: SubscriptionCenter<Publication>
    ) throws(CenterError) {
        let before = center.subscription(of: customer, to: pattern)
        if try center.add(customer, to: pattern, from: from, group: group) {
            server.clusterInterestAdded(pattern, group: group)
        } else if let before {
            server.clusterInterestMoved(pattern, from: before.group, to: group)
        }
    }

    /// The interest upstream is the subscription's: its pattern, in its group or in none.
    func unsubscribe(_ pattern: String, in center: SubscriptionCenter<Publication>) {
        if let ended = center.subscription(of: customer, to: pattern), center.remove(customer, from: pattern) {
            server.clusterInterestRemoved(pattern, group: ended.group)
        }
    }
}

extension ClusterNodeEnvironment where Client == Session {
    /// The line protocol's session, its own customer.
    init(server: Server, session: Session, cluster: any ClusterLink) {
        self.init(server: server, session: session, customer: session, cluster: cluster)
    }
}
