import SubscriptionMQTT
import SubscriptionProtocol
import SubscriptionWire

/// What a publication made by an MQTT client carries besides what every publication has (number, `from=`, info
/// pairs, payload): its QoS, its RETAIN flag, the MQTT 5.0 properties a subscriber gets unaltered, and who published
/// it (for no-local). Attached to the ``Publication`` (``Publication/attachment``), so it travels through the center
/// with it and is there when a retained number's value is pushed later. A line protocol's publication has none: to
/// an MQTT subscriber it is a QoS 0 message without properties but the user properties its info pairs make.
final class MQTTMessage {
    /// The QoS it was published with.
    let qos: MQTTQoS
    /// Its RETAIN flag (what retain-as-published gives a subscriber).
    let retainFlag: Bool
    /// The properties forwarded to 5.0 subscribers: payload format indicator, message expiry interval (counted down
    /// from ``receivedAt``), content type, response topic, correlation data and the user properties, in order.
    let properties: MQTTProperties
    /// The publishing client's session, for no-local (compared by identity only).
    let publisher: ObjectIdentifier?
    /// When it arrived (``MonotonicClock`` nanoseconds), for its message expiry interval.
    let receivedAt: UInt64

    init(
        qos: MQTTQoS, retainFlag: Bool, properties: MQTTProperties, publisher: ObjectIdentifier?, receivedAt: UInt64
    ) {
        self.qos = qos
        self.retainFlag = retainFlag
        self.properties = properties
        self.publisher = publisher
        self.receivedAt = receivedAt
    }

    /// The properties of a PUBLISH (or a will) that travel to subscribers: the others (topic alias, subscription
    /// identifiers, a will's delay) are the hop's own, or not PUBLISH properties at all.
    static func forwarded(_ properties: MQTTProperties) -> MQTTProperties {
        guard !properties.isEmpty else { return properties }
        var kept = properties
        if kept.topicAlias != nil { kept.topicAlias = nil }
        if kept.willDelayInterval != nil { kept.willDelayInterval = nil }
        if !kept.subscriptionIdentifiers.isEmpty { kept.subscriptionIdentifiers = [] }
        return kept.isEmpty ? MQTTProperties() : kept
    }

    /// True once its message expiry interval has passed at `now`: a message queued that long is dropped.
    func hasExpired(at now: UInt64) -> Bool {
        guard let interval = properties.messageExpiryInterval else { return false }
        return now &- receivedAt >= UInt64(interval) * 1_000_000_000
    }
}

extension Publication {
    /// The MQTT part of this publication; nil for one made by another front (or the daemon).
    var mqtt: MQTTMessage? { attachment as? MQTTMessage }
}

/// The info pairs of an MQTT 5.0 publication's user properties that a line subscriber can be given: those whose
/// name is an info key (``InfoPair``) and whose value, percent-encoded (``InfoPair/percentEncoded(_:)``), is a valid
/// info value; the first of each name, at most ``InfoPair/maxCount``. MQTT subscribers get every user property as
/// sent, from the ``MQTTMessage``.
enum MQTTUserProperties {
    static func infoPairs(_ properties: [MQTTUserProperty]) -> [InfoPair] {
        var pairs: [InfoPair] = []
        var seen: Set<String> = []
        for property in properties where pairs.count < InfoPair.maxCount && !seen.contains(property.name) {
            let pair = InfoPair(key: property.name, value: InfoPair.percentEncoded(property.value))
            guard (try? InfoPair.check([pair])) != nil else { continue }
            seen.insert(property.name)
            pairs.append(pair)
        }
        return pairs
    }

    /// The user properties a line publication's info pairs give an MQTT 5.0 subscriber: each pair, its value
    /// percent-decoded when it decodes (by the convention of info values), else as it is.
    static func userProperties(_ pairs: [InfoPair]) -> [MQTTUserProperty] {
        pairs.map { MQTTUserProperty($0.key, InfoPair.percentDecoded($0.value) ?? $0.value) }
    }
}
