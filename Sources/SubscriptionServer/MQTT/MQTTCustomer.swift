import SubscriptionCenter
import SubscriptionMQTT
import SubscriptionProtocol

/// An MQTT client's customer in the center: its session's plain subscriptions share one, and each shared
/// subscription (`$share/<group>/<filter>`, a queue group) has one of its own, because the center holds one
/// subscription per customer and pattern, and MQTT lets a client subscribe to one filter plainly and in groups at
/// once. What it receives goes to its ``MQTTClientSession``, which decides how (and whether) the client gets it.
///
/// Held by the center until removed, as the line protocol's sessions are: the client session removes its customers
/// when it ends (its expiry, a clean start). `@unchecked Sendable`: used on the loop's queue only.
final class MQTTCustomer: SessionCustomer, @unchecked Sendable {
    typealias Message = Publication

    /// The session it serves. `unowned(unsafe)` (no reference counting on each delivery). Invariant: the session
    /// owns its customers and outlives their time in the center: ``MQTTClientSession/end()`` removes every one of
    /// them from the center (and forgets them) before the session can go, and nothing else keeps a customer
    /// (``MQTTTests`` end sessions while publications flow).
    unowned(unsafe) let session: MQTTClientSession
    /// ``session`` as an unmanaged reference: the delivery path calls it without a retain and release (an
    /// `unowned(unsafe)` reference is copied into a strong one each time it is used). The same invariant.
    private let sessionRef: Unmanaged<MQTTClientSession>
    /// The shared subscription it stands for, nil for the session's plain subscriptions.
    let shared: MQTTSharedKey?
    /// Its session's identity (the publisher no-local compares with), taken once.
    let sessionID: ObjectIdentifier

    /// What the common delivery needs, kept here so that it touches the customer and the connection only (a fan-out
    /// to 500 clients reads 500 more objects otherwise): the session's connection, while it has one and its plain
    /// subscriptions all ask one QoS. Unretained references. Invariant: the session sets it, and clears it, whenever
    /// its connection, subscriptions, version or the client's Maximum Packet Size change (so the connection is the
    /// one the session holds); the server outlives every session.
    struct Lane {
        var connection: Unmanaged<Session>
        var server: Unmanaged<Server>
        var qos: MQTTQoS
        var version: MQTTVersion
        var maximumPacketSize: Int
    }

    /// The common case's state, set by the session (plain customers only); nil when the session decides.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var lane: Lane?

    init(session: MQTTClientSession, shared: MQTTSharedKey?) {
        self.session = session
        self.sessionRef = Unmanaged.passUnretained(session)
        self.shared = shared
        self.sessionID = ObjectIdentifier(session)
    }

    /// True once its session ended (read without a retain and release of the session).
    var isSessionEnded: Bool { sessionRef._withUnsafeGuaranteedRef { $0.isEnded } }

    var retention: CustomerRetention { .untilRemoved }

    func receive(_ publication: Publication, on number: String) -> Bool {
        // The common case, as lean as a line subscriber's: a connected client whose plain subscriptions all ask one
        // QoS, a QoS 0 delivery, no `$` number: the packet made once for all (MQTTClientSession.deliver's first
        // case, without a look at the session).
        if let lane, lane.qos == .atMostOnce || !publication.hasAttachment {
            // The packet the first subscriber's delivery made, for the others; else made now, or why not.
            let frame: Unmanaged<Publication>
            if let made = lane.server._withUnsafeGuaranteedRef({
                $0.mqttRenditions.madeFrame(
                    of: publication, version: lane.version, maximumPacketSize: lane.maximumPacketSize)
            }) {
                frame = made
            } else {
                let found = lane.server._withUnsafeGuaranteedRef {
                    $0.mqttRendition(
                        of: publication, number: number, version: lane.version,
                        maximumPacketSize: lane.maximumPacketSize)
                }
                switch found {
                case .frame(let made): frame = made
                case .none: return false
                case .dollar:  // the `$` rule: the session looks at the subscriptions
                    return sessionRef._withUnsafeGuaranteedRef { $0.deliver(publication, on: number, through: self) }
                }
            }
            return lane.connection._withUnsafeGuaranteedRef { connection in
                frame._withUnsafeGuaranteedRef { connection.queueMQTT($0) }
            }
        }
        return sessionRef._withUnsafeGuaranteedRef { $0.deliver(publication, on: number, through: self) }
    }

    func receive(_ publication: Publication, on number: String, throughGroup group: String) -> Bool {
        session.deliver(publication, on: number, through: self)
    }

    /// A number subscribed exactly was removed: MQTT has no such notice; the client's filter stays in its session,
    /// and takes the number again when it is created again.
    func numberRemoved(_ number: String) {
        session.numberRemoved(number, from: self)
    }

    /// A retained number's current value, pushed by a `SUBSCRIBE`'s command: the session sends it with RETAIN.
    func push(_ value: Publication) {
        session.pushRetained(value, through: self)
    }
}

/// A shared subscription: its group (the share name) and its topic filter (without `$share/<group>/`).
struct MQTTSharedKey: Hashable, Sendable {
    var group: String
    var filter: String
}
