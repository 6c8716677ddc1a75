import SubscriptionCommands
import SubscriptionMQTT
import SubscriptionProtocol
import SubscriptionSystem
import SubscriptionWire

/// The MQTT front (docs/PROTOCOL.md, "MQTT"): MQTT 3.1.1 and 5.0 clients on the same center as the line protocol's.
/// Each packet becomes what the line protocol would do (a `PUB`, a `SUB`, a `CREATE`, an `UNSUB`), run through the
/// same policy and handlers (`run(_:for:customer:message:)`), and each reply becomes the packet's acknowledgement
/// (`mqttReplied(_:expectation:for:)`). The parts: CONNECT and the sessions (`Server+MQTTConnect.swift`,
/// `Server+MQTTSessions.swift`), PUBLISH (`Server+MQTTPublish.swift`), SUBSCRIBE and UNSUBSCRIBE
/// (`Server+MQTTSubscribe.swift`).
extension Server {
    /// The MQTT front of a new connection, its decoder taking packets up to the size CONNACK announces.
    func makeMQTTFront() -> MQTTConnection {
        MQTTConnection(maximumPacketSize: mqttMaximumPacketSize)
    }

    /// The largest packet a client may send: a `max_payload` payload with a topic and properties of up to
    /// `max_line` bytes.
    var mqttMaximumPacketSize: Int { configuration.maxPayload + configuration.maxLine }

    /// Runs a command an MQTT packet made, as ``run(_:for:)`` runs a line command, for `customer` (whose
    /// subscriptions a `SUB`/`UNSUB` changes, and which a retained value is pushed to), the publication it makes
    /// carrying `message`. A command that must wait (behind the session's staged values or its replies in flight)
    /// waits with both.
    func run(_ command: consuming Command, for session: Session, customer: MQTTCustomer, message: MQTTMessage?) {
        // A command of a session that ended meanwhile (taken over with a clean start, expired) does not run: its
        // customers left the center for good. Its reply still comes, in its turn.
        guard !customer.isSessionEnded else {
            return session.queueError(ProtocolError(.limit, "the MQTT session ended"))
        }
        if session.stagedValues > 0 {
            if !stageBehind(command, for: session, message: message) {
                session.waitingCommand = .success(command)
                session.waitingMQTT = (customer, message)
            }
            return
        }
        if !session.repliesInFlight.isEmpty, !runsAhead(command, of: session) {
            session.waitingCommand = .success(command)
            session.waitingMQTT = (customer, message)
            return
        }
        let reply: Reply
        mqttPublishing = message
        mqttPublisherID = customer.sessionID
        defer {
            mqttPublishing = nil
            mqttPublisherID = nil
        }
        do throws(ProtocolError) {
            if isClustered, let cluster {
                let environment = ClusterNodeEnvironment(
                    server: self, session: session, customer: customer, cluster: cluster)
                reply = try CommandDispatch.run(
                    command, client: &session.client, center: center, environment: environment)
            } else {
                let environment = NodeEnvironment(server: self, session: session, customer: customer)
                reply = try CommandDispatch.run(
                    command, client: &session.client, center: center, environment: environment)
            }
        } catch {
            session.queueError(error)
            return
        }
        switch reply {
        case .later, .staged: return
        default: session.queue(reply)
        }
    }

    /// A publication behind the session's staged values that may be staged too (as a line one would).
    private func stageBehind(_ command: Command, for session: Session, message: MQTTMessage?) -> Bool {
        guard case .publish(let number, let payload, let info) = command,
            (try? CommandPolicy.authorize(command, for: session.client)) != nil
        else { return false }
        mqttPublishing = message
        defer { mqttPublishing = nil }
        return (try? stage(number, payload: payload, info: info, sender: session.client.name, for: session)) != nil
    }

    /// A publication being made for an MQTT client gets its MQTT part: every place a command makes its publication
    /// calls this once it is made.
    func attachMQTT(to publication: Publication) {
        if let message = mqttPublishing { publication.attachment = message }
    }

    // MARK: Packets

    /// One packet of `session`'s client, or the failure that ends its connection.
    func handleMQTT(_ result: Result<MQTTPacket, MQTTDecodeError>, for session: Session) {
        guard let front = session.mqtt else { return }
        let packet: MQTTPacket
        switch result {
        case .failure(let error):
            return mqttRefuse(session, front, error)
        case .success(let decoded):
            packet = decoded
        }
        if front.phase == .awaitingConnect {
            guard case .connect(let connect) = packet else {
                return mqttClose(session, front, MQTTReasonCode.protocolError, "the first packet must be CONNECT")
            }
            return mqttConnect(connect, session, front)
        }
        guard front.phase == .connected, let client = front.client else { return }
        switch packet {
        case .publish(let publish):
            mqttPublish(publish, session, front, client)
        case .puback, .pubrec, .pubcomp:
            client.acknowledged(packet)
        case .pubrel(let ack):
            // The client's QoS 2 message is released: its identifier may be used again. PUBCOMP in order with the
            // replies before it (a PUBREC may still be waiting for its publication's answer).
            let known = client.inboundQoS2.remove(ack.packetID) != nil
            if known { front.inboundUnacknowledged = max(0, front.inboundUnacknowledged - 1) }
            let reason =
                known || front.version == .v311 ? MQTTReasonCode.success : MQTTReasonCode.packetIdentifierNotFound
            respond(session, front, .pubcomp(MQTTAck(packetID: ack.packetID, reasonCode: reason)))
        case .subscribe(let subscribe):
            mqttSubscribe(subscribe, session, front, client)
        case .unsubscribe(let unsubscribe):
            mqttUnsubscribe(unsubscribe, session, front, client)
        case .pingreq:
            respond(session, front, .pingresp)
        case .disconnect(let disconnect):
            mqttDisconnect(disconnect, session, front, client)
        case .auth:
            // No authentication method is ever agreed on (CONNECT with one is refused): an AUTH has no exchange to
            // belong to.
            mqttClose(session, front, MQTTReasonCode.protocolError, "AUTH without an authentication method")
        case .connect:
            mqttClose(session, front, MQTTReasonCode.protocolError, "a second CONNECT")
        case .connack, .suback, .unsuback, .pingresp:
            mqttClose(session, front, MQTTReasonCode.protocolError, "a packet only a server sends")
        }
    }

    /// Queues `packet` in order with the replies the session awaits (it goes out when they have).
    func respond(_ session: Session, _ front: MQTTConnection, _ packet: MQTTPacket) {
        var bytes: [UInt8] = []
        MQTTEncoder.encode(packet, version: front.version, into: &bytes)
        front.expectations.append(.bytes(bytes))
        session.queue(.ok())
    }

    /// The decoder refused what the client sent: the answer the specification gives (a CONNACK for a CONNECT of a
    /// version not spoken here, a DISCONNECT with the reason code for a 5.0 client, nothing for a 3.1.1 one), then
    /// the connection closes. What came before is served first: its replies are queued already.
    private func mqttRefuse(_ session: Session, _ front: MQTTConnection, _ error: MQTTDecodeError) {
        logger.info(
            "MQTT client refused: \(error.message)",
            metadata: ["session": "\(session.id)", "address": "\(session.peerAddress)"])
        if let level = error.unsupportedLevel {
            // 3.1.1's CONNACK with return code 1 for the levels below 5; 5.0's 0x84 for those above.
            let version: MQTTVersion = level > 5 ? .v5 : .v311
            let code =
                version == .v5
                ? MQTTReasonCode.unsupportedProtocolVersion
                : MQTTReasonCode.ConnectReturn311.unacceptableProtocolVersion
            var bytes: [UInt8] = []
            MQTTEncoder.encode(.connack(MQTTConnAck(reasonCode: code)), version: version, into: &bytes)
            _ = session.queueMQTT(bytes, isDelivery: false)
            loop.traffic.protocolErrors += 1
            front.phase = .ended
            session.requestClose(.protocolError)
            return
        }
        // A first packet that is not a CONNECT, or a CONNECT that does not read: the connection closes (the version
        // the client speaks is not known yet, so nothing is sent).
        mqttClose(session, front, error.reasonCode, error.message, reason: .protocolError)
    }

    /// Ends the connection from the server's side: a 5.0 client is told why (DISCONNECT with `code` and, when it
    /// takes them, the reason string), a 3.1.1 one just sees the close. Its will is published (the connection ends
    /// without the client's DISCONNECT).
    func mqttClose(
        _ session: Session, _ front: MQTTConnection, _ code: UInt8, _ why: String,
        reason: CloseReason = .protocolError
    ) {
        guard front.phase != .ended else { return }
        if reason == .protocolError { loop.traffic.protocolErrors += 1 }
        if front.version == .v5 && front.phase == .connected {
            var properties = MQTTProperties()
            if front.sendsProblemInformation { properties.reasonString = why }
            var bytes: [UInt8] = []
            MQTTEncoder.encode(
                .disconnect(MQTTDisconnect(reasonCode: code, properties: properties)), version: .v5, into: &bytes)
            _ = session.queueMQTT(bytes, isDelivery: false)
        }
        front.phase = .ended
        front.pendingCommands.removeAll()
        session.requestClose(reason)
        // The MQTT session ends now, not when the peer's end of the close comes (up to Session.closeDeadline
        // later, never for a client that is gone): the will goes out, the session is free to be resumed.
        mqttConnectionEnded(session)
    }

    /// The client's DISCONNECT: 0x00 discards the will, 0x04 keeps it; a 5.0 client may change its session's expiry
    /// (not from 0, a protocol error). The connection closes as the client asked.
    private func mqttDisconnect(
        _ disconnect: MQTTDisconnect, _ session: Session, _ front: MQTTConnection, _ client: MQTTClientSession
    ) {
        if let expiry = disconnect.properties.sessionExpiryInterval {
            guard client.expiryInterval != 0 || expiry == 0 else {
                return mqttClose(
                    session, front, MQTTReasonCode.protocolError,
                    "a Session Expiry Interval in DISCONNECT after 0 in CONNECT")
            }
            client.expiryInterval = min(expiry, UInt32(clamping: configuration.mqtt.sessionExpiryMax))
        }
        front.willDiscarded = disconnect.reasonCode != MQTTReasonCode.disconnectWithWill
        front.phase = .ended
        front.pendingCommands.removeAll()
        session.requestClose(.client)
    }

    // MARK: Replies

    /// A command's reply (or a response's turn) came for an MQTT connection: what its expectation says goes out.
    func mqttReplied(
        _ result: Result<Reply, ProtocolError>, expectation: MQTTConnection.Expectation, for session: Session
    ) {
        guard let front = session.mqtt else { return }
        switch expectation {
        case .nothing:
            if case .failure(let error) = result { mqttCommandRefused(error, session) }
        case .create:
            if case .failure(let error) = result { front.createRefusal = error }
        case .bytes(let bytes):
            _ = session.queueMQTT(bytes, isDelivery: false)
        case .puback(let id):
            front.inboundUnacknowledged -= 1
            let (code, why) = publicationAnswer(result, front)
            mqttAck(.puback(MQTTAck(packetID: id, reasonCode: code, properties: problem(why, front))), session, front)
        case .pubrec(let id):
            let (code, why) = publicationAnswer(result, front)
            // A QoS 2 message counts against the Receive Maximum until its PUBCOMP; a refused one ends its exchange
            // here: the identifier is free at once.
            if code >= 0x80, let client = front.client, client.inboundQoS2.remove(id) != nil {
                front.inboundUnacknowledged -= 1
            }
            mqttAck(.pubrec(MQTTAck(packetID: id, reasonCode: code, properties: problem(why, front))), session, front)
        case .subscribe(let index, let qos, let last, let undo):
            subscribed(index: index, granted: qos, result, session, front, last: last, undo: undo)
        }
    }

    /// Writes an acknowledgement to the client.
    private func mqttAck(_ packet: MQTTPacket, _ session: Session, _ front: MQTTConnection) {
        var bytes: [UInt8] = []
        MQTTEncoder.encode(packet, version: front.version, into: &bytes)
        _ = session.queueMQTT(bytes, isDelivery: false)
    }

    /// The reason code (and reason string) a publication's reply gives its PUBACK or PUBREC: success, or 0x10 when
    /// nobody received it (5.0); a refusal's code for 5.0, and for 3.1.1 a positive acknowledgement of a message
    /// dropped (the specification's choice besides closing the connection), logged.
    private func publicationAnswer(_ result: Result<Reply, ProtocolError>, _ front: MQTTConnection) -> (UInt8, String?)
    {
        switch result {
        case .success(.count(let receivers)):
            return (receivers == 0 && front.version == .v5 ? MQTTReasonCode.noMatchingSubscribers : 0, nil)
        case .success:
            return (0, nil)
        case .failure(let error):
            let refusal = front.createRefusal.map { created in error.code == .notFound ? created : error } ?? error
            front.createRefusal = nil
            stats.mqttRefused += 1
            guard front.version == .v5 else { return (0, nil) }
            return (Self.mqttReasonCode(for: refusal), refusal.message)
        }
    }

    /// A 5.0 reason string, when the client takes them.
    private func problem(_ why: String?, _ front: MQTTConnection) -> MQTTProperties {
        var properties = MQTTProperties()
        if let why, front.version == .v5, front.sendsProblemInformation { properties.reasonString = why }
        return properties
    }

    /// A refused command that had no acknowledgement to carry its refusal (a QoS 0 publication): counted.
    private func mqttCommandRefused(_ error: ProtocolError, _ session: Session) {
        stats.mqttRefused += 1
        session.mqtt?.createRefusal = nil
        logger.debug("MQTT: \(error.message)", metadata: ["session": "\(session.id)"])
    }

    /// MQTT 5.0's reason code for a refusal of the line protocol's (docs/PROTOCOL.md, "MQTT", reason codes).
    static func mqttReasonCode(for error: ProtocolError) -> UInt8 {
        switch error.code {
        case .denied, .auth: MQTTReasonCode.notAuthorized
        case .limit: MQTTReasonCode.quotaExceeded
        case .name: MQTTReasonCode.topicNameInvalid
        case .tooBig: MQTTReasonCode.packetTooLarge
        default: MQTTReasonCode.implementationSpecificError
        }
    }

    // MARK: Odds and ends

    /// The MQTT topic of `number` (``MQTTTopicMap/topic(forNumber:)``), remembered for the numbers delivered to
    /// MQTT clients most recently (a bounded cache: each delivery would map it again), the last one apart (a
    /// publication's deliveries ask for the same number one after the other).
    func mqttTopic(forNumber number: String) -> String? {
        if let last = lastMQTTTopic, last.number == number { return last.topic }
        let topic: String?
        if let cached = mqttTopics[number] {
            topic = cached
        } else {
            topic = MQTTTopicMap.topic(forNumber: number)
            if mqttTopics.count >= Self.mqttTopicCacheLimit { mqttTopics.removeAll(keepingCapacity: true) }
            mqttTopics[number] = .some(topic)
        }
        lastMQTTTopic = (number, topic)
        return topic
    }

    /// What ``mqttRendition(of:number:version:maximumPacketSize:)`` found.
    enum MQTTRenditionLookup {
        /// The packet to queue: unretained, held by ``mqttRenditions`` until the next publication's (the caller
        /// queues it at once).
        case frame(Unmanaged<Publication>)
        /// No packet for this client: the number has no topic, the message expired, or it is too large.
        case none
        /// A number starting with `$`: whether it reaches the client depends on its filters (MQTT's `$` rule).
        case dollar
    }

    /// ``mqttRendition(of:_:version:maximumPacketSize:now:)`` of a live QoS 0 delivery to `number` without RETAIN:
    /// its topic looked up only when the packet is not made yet, and whether the number starts with `$` found out
    /// once per publication.
    func mqttRendition(
        of publication: Publication, number: String, version: MQTTVersion, maximumPacketSize: Int
    ) -> MQTTRenditionLookup {
        let slot = version == .v5 ? 2 : 0
        if mqttRenditions.source == ObjectIdentifier(publication) {
            if mqttRenditions.isDollar { return .dollar }
            if let frame = mqttRenditions.unretained(slot) {
                return frame._withUnsafeGuaranteedRef { $0.frameCount } <= maximumPacketSize ? .frame(frame) : .none
            }
        } else {
            mqttRenditions.start(publication)
            if mqttRenditions.isDollar { return .dollar }
        }
        guard let topic = mqttTopic(forNumber: number) else { return .none }
        let delivery = MQTTDelivery(topic: topic, qos: .atMostOnce, retain: false, subscriptionIDs: [])
        let now = publication.hasAttachment ? MonotonicClock.nanoseconds() : 0
        guard
            mqttRendition(of: publication, delivery, version: version, maximumPacketSize: maximumPacketSize, now: now)
                != nil, let frame = mqttRenditions.unretained(slot)
        else { return .none }
        return .frame(frame)
    }

    /// The PUBLISH packet of a QoS 0 delivery of `publication` (no packet identifier, no subscription identifier) for
    /// `version`, as a frame publication (``Publication/rendition(frame:)``): made once for the deliveries of one
    /// publication and kept until the next one, so that its subscribers queue one frame as line subscribers do
    /// (copied once into the frame log, or shared). Nil when the message expired or the packet is larger than
    /// `maximumPacketSize`.
    func mqttRendition(
        of publication: Publication, _ delivery: MQTTDelivery, version: MQTTVersion, maximumPacketSize: Int,
        now: UInt64
    ) -> Publication? {
        let slot = (version == .v5 ? 2 : 0) + (delivery.retain ? 1 : 0)
        if mqttRenditions.source != ObjectIdentifier(publication) {
            mqttRenditions.start(publication)
        } else if let frame = mqttRenditions[slot] {
            return frame.frameCount <= maximumPacketSize ? frame : nil
        }
        let frame: Publication? = withMQTTScratch { scratch in
            guard
                delivery.encode(
                    publication, packetID: nil, dup: false, version: version, maximumPacketSize: .max, now: now,
                    into: &scratch)
            else { return nil }
            return scratch.withUnsafeBytes { Publication.rendition(frame: $0) }
        }
        guard let frame else { return nil }
        mqttRenditions[slot] = frame
        return frame.frameCount <= maximumPacketSize ? frame : nil
    }

    /// The most numbers ``mqttTopic(forNumber:)`` remembers; past it, it starts again.
    static let mqttTopicCacheLimit = 4_096

    /// Calls `body` with the MQTT deliveries' reusable buffer, emptied.
    func withMQTTScratch<R>(_ body: (inout [UInt8]) -> R) -> R {
        var scratch: [UInt8] = []
        swap(&scratch, &mqttScratch)
        scratch.removeAll(keepingCapacity: true)
        defer { swap(&scratch, &mqttScratch) }
        return body(&scratch)
    }
}

/// The PUBLISH packets made for the publication delivered last
/// (``Server/mqttRendition(of:_:version:maximumPacketSize:now:)``): one per version and RETAIN flag. The publication
/// is kept (so that its identity is not reused by another while its packets are here).
struct MQTTRenditions {
    var source: ObjectIdentifier?
    var kept: Publication?
    /// True when the publication's number starts with `$` (set by ``start(_:)``, whichever delivery comes first: a
    /// packet made for a `$SYS/#` subscriber is never handed to a `#` one).
    private(set) var isDollar = false
    /// By `(version == 5.0 ? 2 : 0) + (retain ? 1 : 0)` (four fields, not an array: one is made per publication).
    private var v311: Publication? {
        didSet {
            v311Ref = v311.map { Unmanaged.passUnretained($0) }
            v311Count = v311?.frameCount ?? 0
        }
    }
    private var v311Retained: Publication? {
        didSet { v311RetainedRef = v311Retained.map { Unmanaged.passUnretained($0) } }
    }
    private var v5: Publication? {
        didSet {
            v5Ref = v5.map { Unmanaged.passUnretained($0) }
            v5Count = v5?.frameCount ?? 0
        }
    }
    private var v5Retained: Publication? { didSet { v5RetainedRef = v5Retained.map { Unmanaged.passUnretained($0) } } }
    /// The same, unretained: read on every delivery without reference counting. Invariant: each is set with its
    /// strong one, which keeps the packet.
    private var v311Ref: Unmanaged<Publication>?
    private var v311RetainedRef: Unmanaged<Publication>?
    private var v5Ref: Unmanaged<Publication>?
    private var v5RetainedRef: Unmanaged<Publication>?
    /// The sizes of ``v311`` and ``v5`` (0 without one), read without a look at the packet.
    private var v311Count = 0
    private var v5Count = 0

    init(source: ObjectIdentifier? = nil, kept: Publication? = nil) {
        self.source = source
        self.kept = kept
    }

    /// Starts over for `publication`: its identity and a strong reference, none of its packets yet. In place, field
    /// by field (a new value assigned over this one is copied and destroyed whole, on every publication).
    mutating func start(_ publication: Publication) {
        source = ObjectIdentifier(publication)
        kept = publication
        isDollar = publication.numberStartsWithDollar
        if v311 != nil { v311 = nil }
        if v311Retained != nil { v311Retained = nil }
        if v5 != nil { v5 = nil }
        if v5Retained != nil { v5Retained = nil }
    }

    /// The QoS 0 packet without RETAIN already made for `publication` in `version` (slot 0 or 2), if it fits in
    /// `maximumPacketSize`: a delivery's first look, inlined into the customer's (nil: ask
    /// ``Server/mqttRendition(of:number:version:maximumPacketSize:)``, which makes it or says why not).
    @inline(__always)
    func madeFrame(
        of publication: Publication, version: MQTTVersion, maximumPacketSize: Int
    ) -> Unmanaged<Publication>? {
        guard source == ObjectIdentifier(publication), !isDollar else { return nil }
        if version == .v5 {
            guard let v5Ref, v5Count <= maximumPacketSize else { return nil }
            return v5Ref
        }
        guard let v311Ref, v311Count <= maximumPacketSize else { return nil }
        return v311Ref
    }

    /// The packet of `slot`, unretained (``MQTTRenditions`` holds it strongly).
    func unretained(_ slot: Int) -> Unmanaged<Publication>? {
        switch slot {
        case 0: v311Ref
        case 1: v311RetainedRef
        case 2: v5Ref
        default: v5RetainedRef
        }
    }

    subscript(slot: Int) -> Publication? {
        get {
            switch slot {
            case 0: v311
            case 1: v311Retained
            case 2: v5
            default: v5Retained
            }
        }
        set {
            switch slot {
            case 0: v311 = newValue
            case 1: v311Retained = newValue
            case 2: v5 = newValue
            default: v5Retained = newValue
            }
        }
    }
}
