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
        if !publish.properties.isEmpty, let alias = publish.properties.topicAlias {
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
        // A QoS 2 publication seen already (its PUBREL not come): acknowledged again, not delivered again (nor
        // counted again).
        if publish.qos == .exactlyOnce, let id = publish.packetID, client.inboundQoS2.contains(id) {
            front.expectations.append(.pubrec(id))
            session.queue(.count(1))
            return
        }
        if publish.qos > .atMostOnce {
            front.inboundUnacknowledged += 1
            guard front.inboundUnacknowledged <= configuration.mqtt.receiveMaximum else {
                return mqttClose(
                    session, front, MQTTReasonCode.receiveMaximumExceeded,
                    "more than \(configuration.mqtt.receiveMaximum) QoS 1 and 2 publications unacknowledged")
            }
        }
        let number: String
        var known = false
        if let last = front.lastTopic, last.topic == topic {
            number = last.number
            known = last.removals == center.removals
        } else {
            do throws(MQTTTopicError) {
                number = try MQTTTopicMap.number(forTopic: topic)
            } catch {
                return refusePublication(publish, session, front, ProtocolError(.name, error.message))
            }
        }
        guard publish.payload.count <= configuration.maxPayload else {
            return refusePublication(
                publish, session, front,
                ProtocolError(
                    .tooBig, "a payload of \(publish.payload.count) bytes (max_payload is \(configuration.maxPayload))")
            )
        }
        if publish.qos == .exactlyOnce, let id = publish.packetID { client.inboundQoS2.insert(id) }
        if known || center.contains(number) {
            front.lastTopic = (topic, number, center.removals)
            // The next one like this to the same plain number takes the one-pass path.
            if publish.qos == .atMostOnce && !publish.retain && publish.properties.isEmpty && !known,
                publish.properties.topicAlias == nil, isPlain(number)
            {
                front.simpleTopics.insert(topic, number: number, removals: center.removals)
                front.hasSimpleTopics = true
            }
        } else {
            front.lastTopic = nil
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
        let info = forwarded.isEmpty ? [] : MQTTUserProperties.infoPairs(forwarded.userProperties)
        let command = Command.publish(number: number, payload: publish.payload, info: info)
        // Alone (the usual case), it runs now, its expectation at hand; behind a create, after it.
        if front.pendingCommands.isEmpty && front.expectations.isEmpty && front.directExpectation == nil {
            front.directExpectation = expectation(of: publish)
            run(command, for: session, customer: client.customer, message: message)
            if let left = front.directExpectation {
                front.directExpectation = nil
                front.expectations.append(left)
            }
        } else {
            front.expectations.append(expectation(of: publish))
            front.pendingCommands.append(.init(command: command, customer: client.customer, message: message))
        }
    }

    /// True when `number` exists and is plain.
    private func isPlain(_ number: String) -> Bool {
        do {
            return try center.retainedSlot(of: number) == nil
        } catch {
            return false
        }
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

    /// The one-pass path of a publisher that sends the same kind of publication again and again (a QoS 0 PUBLISH
    /// without flags or properties to the plain number of ``MQTTConnection/simpleTopic``), when nothing else of the
    /// session is under way: the decoder takes it without making a packet, and its `PUB` runs as the general path's
    /// would (its reply, the count, needs no acknowledgement). False, having taken nothing, when the next packet is
    /// not one.
    func mqttTakeSimplePublish(_ session: Session, _ front: MQTTConnection) -> Bool {
        guard front.phase == .connected, let client = front.client, front.expectations.isEmpty,
            front.directExpectation == nil, session.stagedValues == 0, session.repliesInFlight.isEmpty,
            let publish = front.decoder.peekSimplePublish(),
            let hit = front.simpleTopics.number(of: publish.topic, removals: center.removals)
        else { return false }
        front.decoder.consume(publish)
        let number = hit.number
        // The deliveries to MQTT subscribers ask for this number's topic next: it is this one.
        lastMQTTTopic = (number, hit.topic)
        guard publish.payload.count <= configuration.maxPayload else {
            stats.mqttRefused += 1
            return true
        }
        front.directExpectation = .nothing
        run(
            .publish(number: number, payload: publish.payload, info: []), for: session, customer: client.customer,
            message: nil)
        if let left = front.directExpectation {
            front.directExpectation = nil
            front.expectations.append(left)
        }
        return true
    }
}
