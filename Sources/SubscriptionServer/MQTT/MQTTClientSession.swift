import DequeModule
import SubscriptionCommands
import SubscriptionMQTT
import SubscriptionProtocol
import SubscriptionSystem
import SubscriptionWire

/// An MQTT client's session on the server (MQTT's "Session State"): its subscriptions, the QoS 1 and 2 messages sent
/// to it and not yet acknowledged, those queued for it (past its Receive Maximum, or while it is away), and the QoS 2
/// messages it sent whose PUBREL has not come. It outlives the connection: a client that connects again with its
/// client identifier and without a clean start finds it (CONNACK's session present), until it expires.
///
/// Its customers in the center (``MQTTCustomer``) receive for it: a QoS 0 message goes out at once while the client
/// is connected, and is dropped while it is away; a QoS 1 or 2 message is sent while fewer than the client's Receive
/// Maximum wait for their acknowledgement, and queued otherwise, up to `max_pending` bytes (counted as the
/// publications' memory held). A message past that is dropped, counted in STATS `mqtt_queue_dropped` and told once on
/// `$SYS.mqtt.queue_full` until the queue has room again.
///
/// Confined to the loop's queue (`@unchecked Sendable`). **Exclusivity.** Its `#if !DEBUG @exclusivity(unchecked)`
/// properties keep the invariant stated on ``EventLoop``; debug builds check it.
final class MQTTClientSession: @unchecked Sendable {
    /// A QoS 1 or 2 message sent and not yet acknowledged: where its exchange stands.
    enum Phase {
        /// QoS 1: sent, its PUBACK awaited.
        case awaitingPuback
        /// QoS 2: sent, its PUBREC awaited.
        case awaitingPubrec
        /// QoS 2: PUBREL sent, its PUBCOMP awaited.
        case awaitingPubcomp
    }

    /// One message in flight towards the client, or queued for it.
    struct Outbound {
        var publication: Publication
        var delivery: MQTTDelivery
        var phase: Phase
    }

    /// The client identifier.
    let clientID: String
    /// The server it lives in (the daemon's, as long as it runs).
    let server: Server
    /// The customer of its plain subscriptions.
    private(set) var customer: MQTTCustomer!
    /// The customer of each shared subscription.
    private(set) var sharedCustomers: [MQTTSharedKey: MQTTCustomer] = [:]
    /// Its subscriptions.
    private(set) var subscriptions: [MQTTSubscriptionKey: MQTTSubscription] = [:] {
        didSet {
            simpleQoS = Self.simpleQoS(of: subscriptions)
            updateLane()
        }
    }
    /// When every plain subscription asks for one QoS and nothing else (no no-local, no retain-as-published, no
    /// subscription identifier), that QoS: a delivery through the plain customer then needs no look at which of them
    /// matched (the center matched one), but for the `$` rule. Nil otherwise.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private var simpleQoS: MQTTQoS?
    /// How many plain subscriptions hold each of the plain customer's patterns (a pattern leaves the center when the
    /// last one goes: `a` and `a/#` both hold `a`).
    var patternHolders: [String: Int] = [:]
    /// Its connection while connected (the session that sent the CONNECT it was bound to).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private(set) var connection: Session? {
        didSet { updateLane() }
    }
    /// The version its last connection spoke.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var version: MQTTVersion {
        didSet { updateLane() }
    }
    /// How many QoS 1 and 2 messages the client takes unacknowledged (its Receive Maximum; 65,535 when it gave none).
    var clientReceiveMaximum = 65_535
    /// The largest packet the client takes (its Maximum Packet Size).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var clientMaximumPacketSize = Int.max {
        didSet { updateLane() }
    }
    /// Messages in flight by packet identifier, and the identifiers in the order they were sent (a resume sends them
    /// again in that order).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private(set) var inflight: [UInt16: Outbound] = [:]
    private var inflightOrder = Deque<UInt16>()
    /// Messages waiting for room in the client's Receive Maximum, or for the client.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private(set) var queued = Deque<Outbound>()
    /// The memory ``queued`` holds, counted as `max_pending` counts a session's output.
    private(set) var queuedBytes = 0
    /// True from the first message dropped for a full queue until the queue has room again (one `$SYS` event).
    private var isQueueFull = false
    /// The next packet identifier to try.
    private var nextPacketID: UInt16 = 1
    /// The QoS 2 messages the client sent whose PUBREC went out and whose PUBREL has not come (a PUBLISH again
    /// with one of these identifiers is a duplicate: acknowledged, not delivered again).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var inboundQoS2: Set<UInt16> = []
    /// Seconds the session lives after its connection ends; `UInt32.max`: until `mqtt_session_expiry`.
    var expiryInterval: UInt32 = 0
    /// When its connection ended (``MonotonicClock`` nanoseconds), nil while connected.
    private(set) var disconnectedAt: UInt64?
    /// A will waiting for its delay (5.0's Will Delay Interval), with what publishing it needs and when it is due.
    var pendingWill: MQTTPendingWill?
    /// The exact numbers some of its subscriptions wait for (``Server/mqttAwaitNumber(_:_:_:)``), and which.
    var awaiting: [String: Set<MQTTSubscriptionKey>] = [:]
    /// True once ``end()`` ran: a command of it still waiting (``Session/waitingMQTT``) is refused, not run.
    private(set) var isEnded = false

    /// The most QoS 1 and 2 messages in flight to a 3.1.1 client (which has no Receive Maximum).
    static let window311 = 1_024
    /// What one queued message costs beyond its publication's memory.
    static let queuedEntryBytes = 64

    init(clientID: String, server: Server, version: MQTTVersion) {
        self.clientID = clientID
        self.server = server
        self.version = version
        self.customer = MQTTCustomer(session: self, shared: nil)
        updateLane()
    }

    /// Gives the plain customer the common case's state (``MQTTCustomer/Lane``): connected, its plain subscriptions
    /// all asking one QoS; nil otherwise. Called whenever one of them changes.
    private func updateLane() {
        guard let customer else { return }
        if let connection, let simpleQoS {
            customer.lane = MQTTCustomer.Lane(
                connection: Unmanaged.passUnretained(connection), server: Unmanaged.passUnretained(server),
                qos: simpleQoS, version: version,
                maximumPacketSize: clientMaximumPacketSize)
        } else {
            customer.lane = nil
        }
    }

    // MARK: Connection

    /// The client is connected on `session` (a CONNECT accepted): the messages in flight are sent again (DUP, or
    /// their PUBREL), then queued ones while the Receive Maximum allows.
    func attach(_ session: Session) {
        connection = session
        disconnectedAt = nil
        pendingWill = nil
        let now = MonotonicClock.nanoseconds()
        for id in inflightOrder {
            guard let outbound = inflight[id] else { continue }
            switch outbound.phase {
            case .awaitingPuback, .awaitingPubrec: _ = send(outbound, packetID: id, dup: true, now: now)
            case .awaitingPubcomp: sendAck(.pubrel(MQTTAck(packetID: id)))
            }
        }
        sendQueued()
    }

    /// Its connection is being taken over by a new one: from now on the old connection's end does not detach (or
    /// end) the session, which passes to the new connection.
    func handOver() {
        connection = nil
    }

    /// The connection ended at `now`; the session stays until it expires (or goes at once without an expiry).
    func detach(at now: UInt64) {
        connection = nil
        disconnectedAt = now
    }

    /// True when it has expired at `now` (disconnected longer than its expiry interval, capped by
    /// `mqtt_session_expiry`).
    func hasExpired(at now: UInt64, cap: Int) -> Bool {
        guard let disconnectedAt else { return false }
        let seconds = min(UInt64(expiryInterval), UInt64(max(0, cap)))
        return now &- disconnectedAt >= seconds * 1_000_000_000
    }

    /// The session ends: every customer leaves the center (and the cluster's interest), nothing queued is kept.
    func end() {
        isEnded = true
        for number in awaiting.keys { server.mqttStopAwaiting(number, self) }
        awaiting.removeAll()
        for customer in [customer!] + Array(sharedCustomers.values) { server.mqttCustomerLeaves(customer) }
        sharedCustomers.removeAll()
        subscriptions.removeAll()
        patternHolders.removeAll()
        inflight.removeAll()
        inflightOrder.removeAll()
        queued.removeAll()
        queuedBytes = 0
        inboundQoS2.removeAll()
        connection = nil
    }

    // MARK: Subscriptions

    /// A number this session's `customer` was subscribed to exactly was removed (the center dropped that
    /// subscription): the filters that hold it wait for the number to exist again, and take it then (MQTT has no
    /// notice of a removed topic: the client's subscription stays).
    func numberRemoved(_ number: String, from customer: MQTTCustomer) {
        for subscription in subscriptions.values where customer.shared == subscription.key.shared {
            if subscription.patterns.pattern == number || subscription.patterns.parent == number {
                server.mqttAwaitNumber(number, self, subscription.key)
            }
        }
    }

    /// The customer a subscription of `key` goes through: the plain one, or the shared subscription's (made on
    /// first use).
    func customer(for key: MQTTSubscriptionKey) -> MQTTCustomer {
        guard let shared = key.shared else { return customer }
        if let existing = sharedCustomers[shared] { return existing }
        let made = MQTTCustomer(session: self, shared: shared)
        sharedCustomers[shared] = made
        return made
    }

    /// Records a subscription (a new one or one that replaces the same filter's); returns true when it is new.
    @discardableResult
    func record(_ subscription: MQTTSubscription) -> Bool {
        subscriptions.updateValue(subscription, forKey: subscription.key) == nil
    }

    /// Forgets a subscription; returns it, nil when there was none.
    func forget(_ key: MQTTSubscriptionKey) -> MQTTSubscription? {
        // A shared subscription's customer stays (until ``end()``): its center subscriptions go by the `UNSUB`s the
        // caller runs, and whatever those leave ``end()`` takes out with the customer.
        guard let removed = subscriptions.removeValue(forKey: key) else { return nil }
        for number in [removed.patterns.pattern] + (removed.patterns.parent.map { [$0] } ?? [])
        where awaiting[number]?.remove(key) != nil && awaiting[number]?.isEmpty == true {
            awaiting[number] = nil
            server.mqttStopAwaiting(number, self)
        }
        return removed
    }

    /// The subscription of `key`, if any.
    func subscription(_ key: MQTTSubscriptionKey) -> MQTTSubscription? { subscriptions[key] }

    // MARK: Deliveries

    /// A publication to `number` reached `customer`: sent or queued as its QoS and the client's state say. False
    /// when it does not reach the client (no subscription of this customer qualifies, the number has no MQTT topic,
    /// a QoS 0 message while away, the packet too large for the client, a full queue): it is then not counted.
    ///
    /// The common case (connected, the plain subscriptions asking one QoS, a QoS 0 delivery) never comes here: the
    /// customer sends it from its ``MQTTCustomer/Lane``; what comes is every other case, and a `$` number's.
    func deliver(_ publication: Publication, on number: String, through customer: MQTTCustomer) -> Bool {
        guard let delivery = decide(publication, on: number, through: customer, retained: false) else { return false }
        // The clock only for a message that may expire (an MQTT one); others never look at it.
        let now = publication.hasAttachment ? MonotonicClock.nanoseconds() : 0
        guard connection != nil else {
            guard delivery.qos > .atMostOnce else { return false }
            return enqueue(Outbound(publication: publication, delivery: delivery, phase: .awaitingPuback))
        }
        if delivery.qos == .atMostOnce { return send(publication, delivery, now: now) }
        return sendOrQueue(Outbound(publication: publication, delivery: delivery, phase: .awaitingPuback), now: now)
    }

    /// A retained number's value pushed at subscribe through `customer`: sent with RETAIN after the SUBACK (the
    /// connection keeps it until then), unless its payload is empty (MQTT's "no retained message") or the
    /// subscription's retain handling says not to.
    func pushRetained(_ value: Publication, through customer: MQTTCustomer) {
        guard value.payloadCount > 0, let connection, let front = connection.mqtt,
            let subscribing = front.subscribing, subscribing.sendsRetained
        else { return }
        guard var delivery = decide(value, on: value.number, through: customer, retained: true) else { return }
        delivery.retain = true
        front.retainedAfterSuback.append((value, delivery))
    }

    /// Sends what waited for the SUBACK: the retained values its subscriptions pushed.
    func sendRetained(_ values: [(Publication, MQTTDelivery)]) {
        let now = MonotonicClock.nanoseconds()
        for (value, delivery) in values {
            if delivery.qos == .atMostOnce {
                _ = send(value, delivery, now: now)
            } else {
                _ = sendOrQueue(Outbound(publication: value, delivery: delivery, phase: .awaitingPuback), now: now)
            }
        }
    }

    /// How `publication` reaches the client through `customer`'s matching subscriptions: the highest QoS among them
    /// (not above the message's), retain-as-published from any of them, their identifiers; nil when none matches
    /// (the `$` rule, no-local), the number has no MQTT topic, or the message expired.
    private func decide(
        _ publication: Publication, on number: String, through customer: MQTTCustomer, retained: Bool
    ) -> MQTTDelivery? {
        let message = publication.mqtt
        // The common case: the center matched one of the plain customer's patterns, and they all ask the same.
        if customer.shared == nil, let qos = simpleQoS, !retained, number.utf8.first != UInt8(ascii: "$") {
            guard let topic = server.mqttTopic(forNumber: number) else { return nil }
            return MQTTDelivery(
                topic: topic, qos: min(qos, message?.qos ?? .atMostOnce), retain: false, subscriptionIDs: [])
        }
        let fromHere = (message?.publisher ?? server.mqttPublisherID) == ObjectIdentifier(self)
        var best: MQTTQoS?
        var retainAsPublished = false
        var ids: [Int] = []
        func consider(_ subscription: MQTTSubscription) {
            guard subscription.matches(number), !(subscription.options.noLocal && fromHere) else { return }
            best = max(best ?? .atMostOnce, subscription.options.qos)
            if subscription.options.retainAsPublished { retainAsPublished = true }
            if let id = subscription.subscriptionID { ids.append(id) }
        }
        if let shared = customer.shared {
            if let subscription = subscriptions[MQTTSubscriptionKey(filter: shared.filter, group: shared.group)] {
                consider(subscription)
            }
        } else {
            for subscription in subscriptions.values where subscription.key.group == nil { consider(subscription) }
        }
        guard let granted = best, let topic = server.mqttTopic(forNumber: number) else { return nil }
        let qos = min(granted, message?.qos ?? .atMostOnce)
        // Retain-as-published: the RETAIN an MQTT client published the message with (one without an MQTT part was
        // published without RETAIN); a line publication has none, and counts as retained when its number is.
        let lineRetained = server.mqttPublisherID == nil && publication.revision != nil
        let retain = retained || (retainAsPublished && (message?.retainFlag ?? lineRetained))
        return MQTTDelivery(topic: topic, qos: qos, retain: retain, subscriptionIDs: ids.sorted())
    }

    /// The window of messages in flight the client allows.
    private var window: Int { version == .v5 ? clientReceiveMaximum : Self.window311 }

    /// Sends `outbound` now when the window has room and nothing queued is ahead of it, else queues it.
    private func sendOrQueue(_ outbound: Outbound, now: UInt64) -> Bool {
        guard queued.isEmpty, inflight.count < window, let connection, hasOutputRoom(connection),
            let id = freePacketID()
        else { return enqueue(outbound) }
        return send(outbound, packetID: id, dup: false, now: now)
    }

    /// Sends a QoS 1 or 2 message as `packetID` and keeps it in flight; false when it could not be written.
    private func send(_ outbound: Outbound, packetID: UInt16, dup: Bool, now: UInt64) -> Bool {
        guard let connection else { return enqueue(outbound) }
        return server.withMQTTScratch { scratch in
            guard
                outbound.delivery.encode(
                    outbound.publication, packetID: packetID, dup: dup, version: version,
                    maximumPacketSize: clientMaximumPacketSize, now: now, into: &scratch)
            else {
                forgetInflight(packetID)
                return false
            }
            if inflight[packetID] == nil {
                var kept = outbound
                kept.phase = outbound.delivery.qos == .exactlyOnce ? .awaitingPubrec : .awaitingPuback
                inflight[packetID] = kept
                inflightOrder.append(packetID)
            }
            return connection.queueMQTT(scratch, isDelivery: true)
        }
    }

    /// Sends a QoS 0 message now: without subscription identifiers, the packet made once for every subscriber of
    /// its version (``Server/mqttRendition(of:_:version:maximumPacketSize:now:)``), queued as a line subscriber's
    /// `MSG` frame is; with them, its own.
    private func send(_ publication: Publication, _ delivery: MQTTDelivery, now: UInt64) -> Bool {
        guard let connection else { return false }
        if delivery.subscriptionIDs.isEmpty {
            guard
                let rendition = server.mqttRendition(
                    of: publication, delivery, version: version, maximumPacketSize: clientMaximumPacketSize, now: now)
            else { return false }
            return connection.queueMQTT(rendition)
        }
        return server.withMQTTScratch { scratch in
            guard
                delivery.encode(
                    publication, packetID: nil, dup: false, version: version,
                    maximumPacketSize: clientMaximumPacketSize, now: now, into: &scratch)
            else { return false }
            return connection.queueMQTT(scratch, isDelivery: true)
        }
    }

    /// Queues a QoS 1 or 2 message, within `max_pending`; past it the message is dropped and counted.
    private func enqueue(_ outbound: Outbound) -> Bool {
        let bytes = outbound.publication.heldBytes + Self.queuedEntryBytes
        guard queuedBytes + bytes <= server.configuration.maxPending else {
            server.stats.mqttQueueDropped += 1
            if !isQueueFull {
                isQueueFull = true
                server.mqttQueueFull(self, queuedBytes: queuedBytes)
            }
            return false
        }
        queued.append(outbound)
        queuedBytes += bytes
        return true
    }

    /// Sends queued messages while the window has room (and the client is connected).
    ///
    /// The output takes them while it holds less than half of `max_pending` (``hasOutputRoom``): a queue may hold as
    /// much as `max_pending` itself, and moved into the output at once it would cut the client off as a slow
    /// consumer. The rest go on once the output has drained (``Server/mqttOutputDrained(_:)``). A connection that
    /// ends meanwhile (its write failed) stops it; what is left waits for the next one.
    func sendQueued() {
        let now = MonotonicClock.nanoseconds()
        while let connection, hasOutputRoom(connection), inflight.count < window, let next = queued.first,
            let id = freePacketID()
        {
            queued.removeFirst()
            queuedBytes -= next.publication.heldBytes + Self.queuedEntryBytes
            if let message = next.publication.mqtt, message.hasExpired(at: now) { continue }
            _ = send(next, packetID: id, dup: false, now: now)
        }
        if isQueueFull && queuedBytes <= server.configuration.maxPending / 2 { isQueueFull = false }
    }

    /// True when `connection`'s output may take more QoS 1 and 2 messages: it holds less than half of `max_pending`
    /// (the other half is room for live QoS 0 messages and acknowledgements).
    private func hasOutputRoom(_ connection: Session) -> Bool {
        connection.output.heldBytes < connection.maxPending / 2
    }

    /// True when messages wait and `connection`'s output has room for them again (``hasOutputRoom``): the drained
    /// output's cue to send them (``Server/mqttOutputDrained(_:)``).
    func sendsQueued(to connection: Session) -> Bool {
        !queued.isEmpty && hasOutputRoom(connection)
    }

    /// A packet identifier no message in flight holds; nil when all 65,535 do.
    private func freePacketID() -> UInt16? {
        guard inflight.count < Int(UInt16.max) else { return nil }
        while inflight[nextPacketID] != nil || nextPacketID == 0 { nextPacketID &+= 1 }
        defer { nextPacketID &+= 1 }
        return nextPacketID
    }

    private func forgetInflight(_ id: UInt16) {
        guard inflight.removeValue(forKey: id) != nil else { return }
        if let index = inflightOrder.firstIndex(of: id) { inflightOrder.remove(at: index) }
    }

    // MARK: Acknowledgements from the client

    /// The client acknowledged `ack` (a PUBACK, PUBREC or PUBCOMP of a message sent to it): its exchange moves on,
    /// and queued messages take the room it leaves.
    func acknowledged(_ packet: MQTTPacket) {
        switch packet {
        case .puback(let ack):
            guard inflight[ack.packetID]?.phase == .awaitingPuback else { return }
            forgetInflight(ack.packetID)
        case .pubrec(let ack):
            guard inflight[ack.packetID]?.phase == .awaitingPubrec else {
                // 5.0: a PUBREC of an identifier not in flight is answered "not found".
                if version == .v5 {
                    sendAck(
                        .pubrel(MQTTAck(packetID: ack.packetID, reasonCode: MQTTReasonCode.packetIdentifierNotFound)))
                }
                return
            }
            if ack.reasonCode >= 0x80 {
                forgetInflight(ack.packetID)
            } else {
                inflight[ack.packetID]?.phase = .awaitingPubcomp
                sendAck(.pubrel(MQTTAck(packetID: ack.packetID)))
                return
            }
        case .pubcomp(let ack):
            guard inflight[ack.packetID]?.phase == .awaitingPubcomp else { return }
            forgetInflight(ack.packetID)
        default:
            return
        }
        sendQueued()
    }

    /// Writes a PUBREL for a message of ours: not a reply to a command of the client, so it goes out at once.
    private func sendAck(_ packet: MQTTPacket) {
        guard let connection else { return }
        var bytes: [UInt8] = []
        MQTTEncoder.encode(packet, version: version, into: &bytes)
        _ = connection.queueMQTT(bytes, isDelivery: false)
    }

    /// ``simpleQoS`` of a set of subscriptions.
    private static func simpleQoS(of subscriptions: [MQTTSubscriptionKey: MQTTSubscription]) -> MQTTQoS? {
        var qos: MQTTQoS?
        for subscription in subscriptions.values where subscription.key.group == nil {
            let options = subscription.options
            guard !options.noLocal, !options.retainAsPublished, subscription.subscriptionID == nil,
                qos == nil || qos == options.qos
            else { return nil }
            qos = options.qos
        }
        return qos
    }

    /// What it holds, for STATS and the tests: messages in flight and queued.
    var inflightCount: Int { inflight.count }
    var queuedCount: Int { queued.count }
}

/// A will message whose publication waits for its delay (5.0).
struct MQTTPendingWill {
    /// The will.
    var will: MQTTWill
    /// The client as its last connection was: its name for `from=`, its user's rights.
    var client: ClientState
    /// When it is published (``MonotonicClock`` nanoseconds).
    var due: UInt64
}
