import SubscriptionCommands
import SubscriptionMQTT
import SubscriptionProtocol
import SubscriptionSystem
import SubscriptionWire

/// PUBLISH (docs/PROTOCOL.md, "MQTT", publishing): the topic (or its alias) mapped to its number, the number made
/// when it is missing (`mqtt_create`), then a `PUB` of the payload with the user properties that make info pairs,
/// carrying its QoS and properties (``MQTTMessage``). A QoS 1 publication is acknowledged with PUBACK, a QoS 2 one
/// with PUBREC, once its `PUB` is answered (after the save of a retained value, after the other nodes' counts with
/// `ack: all`), in the order they came; a QoS 2 publication whose identifier is still held is a duplicate: it gets
/// its PUBREC again and is not delivered twice.
extension Server {
    func mqttPublish(
        _ publish: MQTTPublish, _ session: Session, _ front: MQTTConnection, _ client: MQTTClientSession
    ) {
        // The topic, or the alias that stands for it (5.0).
        var topic = publish.topic
        if let alias = publish.properties.topicAlias {
            guard Int(alias) <= configuration.mqtt.topicAliasMaximum, front.version == .v5 else {
                return mqttClose(
                    session, front, MQTTReasonCode.topicAliasInvalid,
                    "topic alias \(alias) is above the Topic Alias Maximum (\(configuration.mqtt.topicAliasMaximum))")
            }
            if topic.isEmpty {
                guard let known = front.topicAliases[alias] else {
                    return mqttClose(
                        session, front, MQTTReasonCode.protocolError, "topic alias \(alias) was never set")
                }
                topic = known
            } else {
                front.topicAliases[alias] = topic
            }
        }
        if publish.qos > .atMostOnce {
            front.inboundUnacknowledged += 1
            guard front.inboundUnacknowledged <= configuration.mqtt.receiveMaximum else {
                return mqttClose(
                    session, front, MQTTReasonCode.receiveMaximumExceeded,
                    "more than \(configuration.mqtt.receiveMaximum) QoS 1 and 2 publications unacknowledged")
            }
        }
        // A QoS 2 publication seen already (its PUBREL not come): acknowledged again, not delivered again.
        if publish.qos == .exactlyOnce, let id = publish.packetID, client.inboundQoS2.contains(id) {
            front.expectations.append(.pubrec(id))
            session.queue(.count(1))
            return
        }
        let number: String
        if let last = front.lastTopic, last.topic == topic {
            number = last.number
        } else {
            do throws(MQTTTopicError) {
                number = try MQTTTopicMap.number(forTopic: topic)
            } catch {
                return refusePublication(publish, session, front, ProtocolError(.name, error.message))
            }
            front.lastTopic = (topic, number)
        }
        guard publish.payload.count <= configuration.maxPayload else {
            return refusePublication(
                publish, session, front,
                ProtocolError(
                    .tooBig, "a payload of \(publish.payload.count) bytes (max_payload is \(configuration.maxPayload))")
            )
        }
        if publish.qos == .exactlyOnce, let id = publish.packetID { client.inboundQoS2.insert(id) }
        if !center.contains(number) {
            guard configuration.mqtt.create == .auto else {
                return refusePublication(
                    publish, session, front,
                    ProtocolError(.notFound, "no subscription number '\(number)' (mqtt_create is never)"))
            }
            front.pendingCommands.append(
                .init(command: .create(number: number, retained: publish.retain), customer: client.customer))
            front.expectations.append(.create)
        }
        // A plain QoS 0 publication needs no MQTT part (its publisher is known while it is delivered,
        // ``mqttPublisherID``), but where a retained value may be saved first and delivered at the end of the turn.
        let forwarded = MQTTMessage.forwarded(publish.properties)
        let message: MQTTMessage? =
            publish.qos == .atMostOnce && !publish.retain && forwarded.isEmpty && !savesState
            ? nil
            : MQTTMessage(
                qos: publish.qos, retainFlag: publish.retain, properties: forwarded,
                publisher: ObjectIdentifier(client), receivedAt: MonotonicClock.nanoseconds())
        let info = MQTTUserProperties.infoPairs(publish.properties.userProperties)
        front.pendingCommands.append(
            .init(
                command: .publish(number: number, payload: publish.payload, info: info), customer: client.customer,
                message: message))
        front.expectations.append(expectation(of: publish))
    }

    /// What the reply to a publication becomes: PUBACK, PUBREC or nothing.
    private func expectation(of publish: MQTTPublish) -> MQTTConnection.Expectation {
        switch (publish.qos, publish.packetID) {
        case (.atLeastOnce, let id?): .puback(id)
        case (.exactlyOnce, let id?): .pubrec(id)
        default: .nothing
        }
    }

    /// A publication refused before any command: answered as its reply would have been (in order with the replies
    /// before it).
    private func refusePublication(
        _ publish: MQTTPublish, _ session: Session, _ front: MQTTConnection, _ error: ProtocolError
    ) {
        if publish.qos == .exactlyOnce, let id = publish.packetID, front.version == .v5 {
            front.client?.inboundQoS2.remove(id)
        }
        front.expectations.append(expectation(of: publish))
        session.queueError(error)
    }
}
