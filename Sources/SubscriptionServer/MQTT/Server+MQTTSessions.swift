import SubscriptionCenter
import SubscriptionCommands
import SubscriptionMQTT
import SubscriptionProtocol
import SubscriptionSystem
import SubscriptionWire

/// MQTT sessions between connections (docs/PROTOCOL.md, "MQTT", sessions and wills): a connection's end detaches its
/// client's session (or ends it, without an expiry) and publishes its will (at once, or after 5.0's Will Delay
/// Interval unless the client comes back first); housekeeping ends the sessions that expired, publishes the wills
/// that are due, and closes the connections silent past one and a half times their keepalive.
extension Server {
    /// An MQTT connection ended (closed, or taken over): its session is detached, or ended when it has no expiry;
    /// its will is published unless its DISCONNECT discarded it. Called once per connection (later calls do
    /// nothing).
    func mqttConnectionEnded(_ session: Session) {
        guard let front = session.mqtt, let client = front.client else { return }
        front.client = nil
        front.phase = .ended
        let now = MonotonicClock.nanoseconds()
        let will = front.willDiscarded ? nil : front.will
        front.will = nil
        // A connection whose session was taken over left it to the new one.
        guard client.connection === session else {
            if let will { publishWill(will, by: session.client) }
            return
        }
        client.detach(at: now)
        if let will {
            let delay = UInt64(min(will.properties.willDelayInterval ?? 0, client.expiryInterval))
            if delay == 0 {
                publishWill(will, by: session.client)
            } else {
                client.pendingWill = MQTTPendingWill(
                    will: will, client: session.client, due: now + delay * 1_000_000_000)
            }
        }
        if client.expiryInterval == 0 || configuration.mqtt.sessionExpiryMax == 0 {
            if let pending = client.pendingWill {
                client.pendingWill = nil
                publishWill(pending.will, by: pending.client)
            }
            endMQTTSession(client)
        }
    }

    /// A session ends (expired, a clean start, no expiry): out of the registry and the center.
    func endMQTTSession(_ client: MQTTClientSession) {
        if mqttSessions[client.clientID] === client { mqttSessions[client.clientID] = nil }
        client.end()
    }

    /// One of a session's customers leaves the center, and its patterns the other nodes' interest.
    func mqttCustomerLeaves(_ customer: MQTTCustomer) {
        if cluster != nil {
            for subscription in center.subscriptions(of: customer) {
                clusterInterestRemoved(subscription.pattern, group: subscription.group)
            }
        }
        center.removeAll(customer)
    }

    /// From housekeeping: the sessions that expired end (a will still waiting is published first), the wills that
    /// are due are published, MQTT connections past their keepalive or without a CONNECT in `auth_timeout` close.
    func mqttHousekeeping(now: UInt64) {
        var ended: [MQTTClientSession] = []
        var wills: [MQTTPendingWill] = []
        let cap = configuration.mqtt.sessionExpiryMax
        for client in mqttSessions.values {
            if let pending = client.pendingWill, pending.due <= now || client.hasExpired(at: now, cap: cap) {
                client.pendingWill = nil
                wills.append(pending)
            }
            if client.hasExpired(at: now, cap: cap) { ended.append(client) }
        }
        for pending in wills { publishWill(pending.will, by: pending.client) }
        for client in ended {
            logger.debug("MQTT session expired", metadata: ["client_id": "\(client.clientID)"])
            stats.mqttSessionsExpired += 1
            endMQTTSession(client)
        }
    }

    /// The liveness of an MQTT connection: one and a half times its keepalive without a packet, or no CONNECT within
    /// `auth_timeout` (10 s when it is off); nil while it is alive.
    func mqttExpiry(of session: Session, _ front: MQTTConnection, now: UInt64) -> CloseReason? {
        switch front.phase {
        case .awaitingConnect:
            let limit = configuration.authTimeout > 0 ? configuration.authTimeout : 10
            return Double(now &- session.connectedAt) / 1e9 > limit ? .authTimeout : nil
        case .connected:
            guard front.keepAlive > 0 else { return nil }
            let limit = UInt64(front.keepAlive) * 1_500_000_000
            return now &- session.lastInputAt > limit ? .mqttKeepalive : nil
        case .connecting, .ended:
            return nil
        }
    }

    /// A liveness limit passed for an MQTT connection: a 5.0 client is told (0x8D for its keepalive), the connection
    /// closes, and its will is published.
    func mqttExpired(_ session: Session, _ front: MQTTConnection, reason: CloseReason) {
        logger.info(
            "closing an MQTT connection: \(reason == .mqttKeepalive ? "keepalive passed" : reason.rawValue)",
            metadata: ["session": "\(session.id)"])
        let code = reason == .mqttKeepalive ? MQTTReasonCode.keepAliveTimeout : MQTTReasonCode.unspecifiedError
        if front.phase == .awaitingConnect {
            front.phase = .ended
            session.requestClose(reason)
        } else {
            mqttClose(session, front, code, "no packet within the keepalive", reason: reason)
        }
    }

    /// The daemon stops: a 5.0 client is told (0x8B); wills are not published (the clients did not go away).
    func mqttShuttingDown(_ session: Session) {
        guard let front = session.mqtt else { return }
        front.willDiscarded = true
        guard front.phase == .connected, front.version == .v5 else { return }
        var bytes: [UInt8] = []
        MQTTEncoder.encode(
            .disconnect(MQTTDisconnect(reasonCode: MQTTReasonCode.serverShuttingDown)), version: .v5, into: &bytes)
        _ = session.queueMQTT(bytes, isDelivery: false)
        front.phase = .ended
    }

    /// An MQTT connection's output drained while its session had messages waiting for room: they go on at the next
    /// step of the loop (never from inside the flush that found the room), once per drain.
    func mqttOutputDrained(_ session: Session) {
        guard let front = session.mqtt, !front.isSendingQueued else { return }
        front.isSendingQueued = true
        queue.async { [self] in
            front.isSendingQueued = false
            guard session.machine.phase == .open, let client = front.client, client.connection === session else {
                return
            }
            client.sendQueued()
            loop.endOfTurn()
        }
    }

    /// A session's queue of QoS 1 and 2 messages passed `max_pending`: told once on `$SYS.mqtt.queue_full` until it
    /// has room again (each message dropped is counted in STATS `mqtt_queue_dropped`).
    func mqttQueueFull(_ client: MQTTClientSession, queuedBytes: Int) {
        logger.warning(
            "MQTT session queue full: messages dropped",
            metadata: [
                "client_id": "\(client.clientID)", "queued_bytes": "\(queuedBytes)",
                "max_pending": "\(configuration.maxPending)",
            ])
        post(
            .mqttQueueFull,
            JSONObject([
                ("client_id", .string(client.clientID)), ("connected", .bool(client.connection != nil)),
                ("queued", .integer(Int64(client.queuedCount))), ("queued_bytes", .integer(Int64(queuedBytes))),
                ("max_pending", .integer(Int64(configuration.maxPending))),
            ]))
    }

    // MARK: Numbers a filter waits for

    /// A subscription waits for an exact number it needs to exist: its `#` filter's parent (`a` of `a/#`), or its
    /// exact number, removed and to be created again. Once per session and number (the session keeps which of its
    /// subscriptions wait, ``MQTTClientSession/awaiting``, and takes itself out when it ends or they go).
    func mqttAwaitNumber(_ number: String, _ client: MQTTClientSession, _ key: MQTTSubscriptionKey) {
        client.awaiting[number, default: []].insert(key)
        mqttNumberWaiters[number, default: [:]][ObjectIdentifier(client)] = client
    }

    /// `client` no longer waits for `number` (its last subscription that did went, or it ended).
    func mqttStopAwaiting(_ number: String, _ client: MQTTClientSession) {
        mqttNumberWaiters[number]?[ObjectIdentifier(client)] = nil
        if mqttNumberWaiters[number]?.isEmpty == true { mqttNumberWaiters[number] = nil }
    }

    /// `number` was created: the subscriptions that waited for it subscribe it (their rights were checked for it
    /// when they subscribed), so that `a/#` matches `a` as MQTT says, and an exact filter of a number removed and
    /// made again receives again.
    func mqttNumberCreated(_ number: String) {
        guard let waiters = mqttNumberWaiters.removeValue(forKey: number) else { return }
        for client in waiters.values {
            let keys = client.awaiting.removeValue(forKey: number) ?? []
            guard !client.isEnded else { continue }
            for key in keys {
                guard var subscription = client.subscription(key) else { continue }
                let isParent = subscription.patterns.parent == number
                guard subscription.patterns.pattern == number || isParent else { continue }
                let customer = client.customer(for: key)
                do {
                    if try center.add(customer, to: number, group: key.group) {
                        clusterInterestAdded(number, group: key.group)
                    }
                } catch {
                    logger.debug("MQTT: cannot subscribe '\(number)' for '\(client.clientID)': \(error)")
                    continue
                }
                if isParent && !subscription.parentSubscribed {
                    if key.group == nil { client.patternHolders[number, default: 0] += 1 }
                    subscription.parentSubscribed = true
                    client.record(subscription)
                }
            }
        }
    }

    // MARK: Wills

    /// Publishes a will as its client would have (its `from=`, its rights, `mqtt_create`), to the center and the
    /// other nodes; one the client may no longer publish is dropped and logged.
    func publishWill(_ will: MQTTWill, by client: ClientState) {
        // A connection's end may come from inside a delivery or a flush (a write that failed): the will goes out at
        // the end of the turn, as a `$SYS` notification does, and before the `$SYS.client.disconnected` of its
        // connection (posted after this call).
        loop.atEndOfTurn { [unowned self] in publishWillNow(will, by: client) }
    }

    /// ``publishWill(_:by:)``'s work, on a step of its own.
    private func publishWillNow(_ will: MQTTWill, by client: ClientState) {
        if let refusal = willRefusal(will, client) {
            logger.info("MQTT will not published: \(refusal.message)")
            return
        }
        guard let number = try? MQTTTopicMap.number(forTopic: will.topic) else { return }
        let exists = center.contains(number)
        if !exists {
            guard configuration.mqtt.create == .auto,
                (try? CommandPolicy.authorize(.create(number: number, retained: will.retain), for: client)) != nil
            else {
                logger.info("MQTT will not published: no subscription number '\(number)'")
                return
            }
            do {
                if try center.create(number, retained: will.retain) {
                    try saveCreated(number, retained: will.retain)
                    post(
                        .numberCreated,
                        JSONObject([
                            ("number", .string(number)), ("kind", .string(will.retain ? "retained" : "plain")),
                            ("by", .string("mqtt")),
                        ]))
                    mqttNumberCreated(number)
                    if let cluster { cluster.create(number, retained: will.retain) { _ in } }
                }
            } catch {
                logger.info("MQTT will not published: cannot create '\(number)': \(error)")
                return
            }
        }
        let message = MQTTMessage(
            qos: will.qos, retainFlag: will.retain, properties: MQTTMessage.forwarded(will.properties),
            publisher: nil, receivedAt: MonotonicClock.nanoseconds())
        let sender = client.name
        var revision: UInt64?
        let receivers: Int
        do throws(CenterError) {
            receivers = try center.send(to: number, from: sender) { (made: UInt64?) -> Publication in
                revision = made
                let publication = will.payload.withUnsafeBytes {
                    Publication.make(number: number, sender: sender, revision: made, info: [], payload: $0)
                }
                publication.attachment = message
                return publication
            }
        } catch {
            return
        }
        if let revision {
            saveValue(of: number, revision: revision, sender: sender, info: [], payload: will.payload[...])
        } else if let cluster {
            _ = cluster.published(to: number, sender: sender, info: [], groups: [], payload: will.payload[...])
        }
        stats.messagesPublished += 1
        stats.messagesDelivered += UInt64(receivers)
        stats.mqttWills += 1
        numberCounters.published(to: number)
    }
}

extension Session {
    /// Runs the MQTT packets read, and the commands they made, while the session may run commands (not held, not
    /// waiting, its output under its mark): one packet's commands all run (or the first that must wait stops them)
    /// before the next packet is read.
    func processMQTT(_ front: MQTTConnection) {
        while machine.isReading, !hasWaitingCommand, front.phase != .connecting {
            if let next = front.pendingCommands.popFirst() {
                if case .subscribe = next.command { front.subscribing?.sendsRetained = next.sendsRetained }
                owner.run(next.command, for: self, customer: next.customer, message: next.message)
            } else if front.phase == .ended {
                return
            } else if front.hasSimpleTopics && owner.mqttTakeSimplePublish(self, front) {
                // Taken in one pass.
            } else if let packet = front.decoder.next() {
                owner.handleMQTT(packet, for: self)
            } else {
                return
            }
            commandRan()
        }
    }

    /// A reply (or a response's turn) for the MQTT front: its expectation decides what goes out.
    func replied(_ result: Result<Reply, ProtocolError>, _ front: MQTTConnection) {
        owner.mqttReplied(result, expectation: front.takeExpectation(), for: self)
    }

    /// Queues a QoS 0 delivery's packet made once for all its subscribers (a frame publication), as ``receive(_:on:)``
    /// queues a `MSG` frame: cut off as a slow consumer instead when it would take the output past `max_pending`.
    func queueMQTT(_ frame: Publication) -> Bool {
        guard machine.phase == .open else { return false }
        if !output.isEmpty && output.heldBytes + frame.heldBytes > maxPending {
            owner.sessionFellBehind(self)
            fail(.slowConsumer)
            return false
        }
        output.append(frame, log: &loop.frameLog, sharing: machine.isOutputHeld)
        if !isDirty { loop.markDirty(self) }
        return true
    }

    /// Queues MQTT bytes in the output. A delivery (`isDelivery`) that would take the output past `max_pending` cuts
    /// the client off as a slow consumer instead (false), as a line subscriber would be; acknowledgements always go.
    func queueMQTT(_ bytes: [UInt8], isDelivery: Bool) -> Bool {
        guard machine.phase == .open else { return false }
        if isDelivery && !output.isEmpty && output.heldBytes + bytes.count > maxPending {
            owner.sessionFellBehind(self)
            fail(.slowConsumer)
            return false
        }
        bytes.withUnsafeBytes { output.append(replyBytes: $0) }
        if !isDirty { loop.markDirty(self) }
        return true
    }

    /// A liveness limit passed for an MQTT connection: closed (a 5.0 client told why when it is connected).
    func expireMQTT(_ front: MQTTConnection, reason: CloseReason) {
        owner.mqttExpired(self, front, reason: reason)
    }
}
