import SubscriptionMQTT
import SubscriptionProtocol
import SubscriptionSystem

/// How one delivery to an MQTT client is written: a PUBLISH of the publication's payload under the number's topic,
/// with the QoS, packet identifier, flags and (for 5.0) properties of that delivery.
struct MQTTDelivery {
    /// The MQTT topic of the number.
    var topic: String
    var qos: MQTTQoS
    /// RETAIN: a retained value pushed at subscribe, or a live message through a retain-as-published subscription.
    var retain: Bool
    /// The subscription identifiers of the subscriptions it came through (5.0).
    var subscriptionIDs: [Int]

    /// The properties a 5.0 client gets with `publication`: the MQTT publisher's (its message expiry counted down
    /// to `now`), or a line publication's info pairs as user properties; and the subscription identifiers. Nil when
    /// the message expired.
    func properties(of publication: Publication, now: UInt64) -> MQTTProperties? {
        var properties = MQTTProperties()
        if let message = publication.mqtt {
            properties = message.properties
            if let interval = message.properties.messageExpiryInterval {
                let elapsed = (now &- message.receivedAt) / 1_000_000_000
                guard elapsed < UInt64(interval) else { return nil }
                properties.messageExpiryInterval = interval - UInt32(elapsed)
            }
        } else {
            let info = publication.info
            if !info.isEmpty { properties.userProperties = MQTTUserProperties.userProperties(info) }
        }
        properties.subscriptionIdentifiers = subscriptionIDs
        return properties
    }

    /// Appends the whole PUBLISH packet for `version` to `bytes`: its header, then the payload. Returns false, having
    /// appended nothing, when the message expired or the packet would be larger than `maximumPacketSize` (the
    /// client's Maximum Packet Size: MQTT 5.0 says such a message is discarded for that client).
    func encode(
        _ publication: Publication, packetID: UInt16?, dup: Bool, version: MQTTVersion, maximumPacketSize: Int,
        now: UInt64, into bytes: inout [UInt8]
    ) -> Bool {
        var properties: MQTTProperties?
        if version == .v5 {
            guard let made = self.properties(of: publication, now: now) else { return false }
            properties = made
        } else if let message = publication.mqtt, message.hasExpired(at: now) {
            return false
        }
        let start = bytes.count
        bytes.reserveCapacity(bytes.count + topic.utf8.count + publication.payloadCount + 16)
        MQTTEncoder.publishHeader(
            topicName: topic, qos: qos, retain: retain, dup: dup, packetID: packetID, properties: properties,
            payloadCount: publication.payloadCount, version: version, into: &bytes)
        guard bytes.count - start + publication.payloadCount <= maximumPacketSize else {
            bytes.removeSubrange(start...)
            return false
        }
        publication.withPayload { bytes.append(contentsOf: $0) }
        return true
    }
}
