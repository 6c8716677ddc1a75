import SubscriptionCommands
import SubscriptionMQTT
import SubscriptionProtocol
import SubscriptionWire

/// SUBSCRIBE and UNSUBSCRIBE (docs/PROTOCOL.md, "MQTT", subscribing): each filter becomes the pattern(s) that serve
/// it (its parent too for one ending in `#`), a `$share/<group>/` filter a queue group through a customer of its own,
/// an exact filter of a missing number a `CREATE` first (`mqtt_create`); then a `SUB` each, whose replies make the
/// SUBACK's reason codes, and whose retained values go out after the SUBACK, as retain handling says.
extension Server {
    func mqttSubscribe(
        _ subscribe: MQTTSubscribe, _ session: Session, _ front: MQTTConnection, _ client: MQTTClientSession
    ) {
        let id = subscribe.properties.subscriptionIdentifiers.first
        front.subscribing = .init(
            packetID: subscribe.packetID, reasonCodes: Array(repeating: 0, count: subscribe.filters.count),
            reason: nil, sendsRetained: true)
        var commands: [(MQTTConnection.PendingCommand, MQTTConnection.Expectation)] = []
        for (index, entry) in subscribe.filters.enumerated() {
            let key: MQTTSubscriptionKey
            var patterns: MQTTFilterPatterns
            do throws(MQTTTopicError) {
                let shared = try MQTTTopicMap.sharedSubscription(entry.filter)
                key = MQTTSubscriptionKey(filter: shared?.filter ?? entry.filter, group: shared?.group)
                patterns = try MQTTTopicMap.patterns(forFilter: key.filter)
            } catch {
                refuseFilter(index, error.reasonCode, error.message, front)
                continue
            }
            if let group = key.group, (try? ClientName.check(group)) == nil {
                refuseFilter(
                    index, MQTTReasonCode.topicFilterInvalid, "share name '\(group)' is not a valid group name", front)
                continue
            }
            let existed = client.subscription(key) != nil
            let customer = client.customer(for: key)
            if let refusal = subscribeRefusal(patterns.pattern, session.client) {
                refuseFilter(index, Self.mqttReasonCode(for: refusal), refusal.message, front)
                continue
            }
            // A parent the user may not subscribe to is left out: `public/#` for a user of `public.>` gets what is
            // below `public`, not `public` itself.
            if let parent = patterns.parent, subscribeRefusal(parent, session.client) != nil { patterns.parent = nil }
            let isExact = (try? Names.checkPattern(patterns.pattern)) == false
            var needsCreate = false
            if isExact && !center.contains(patterns.pattern) {
                guard configuration.mqtt.create == .auto else {
                    refuseFilter(
                        index, MQTTReasonCode.implementationSpecificError,
                        "no subscription number '\(patterns.pattern)' (mqtt_create is never)", front)
                    continue
                }
                needsCreate = true
            }
            // An exact parent (`a` of `a/#`) is subscribed while its number exists; a wildcard one (`*` of `+/#`)
            // always.
            let parent = patterns.parent.flatMap { parent in
                (try? Names.checkPattern(parent)) == true || center.contains(parent) ? parent : nil
            }
            let subscription = MQTTSubscription(
                key: key, options: entry.options, patterns: patterns, parentSubscribed: parent != nil,
                subscriptionID: id, excludesDollarTopics: MQTTTopicMap.excludesDollarTopics(key.filter))
            if parent == nil, let missing = patterns.parent { mqttAwaitNumber(missing, client, key) }
            let previous = client.subscription(key)
            client.record(subscription)
            let sendsRetained =
                entry.options.retainHandling == 0 || (entry.options.retainHandling == 1 && !existed)
            if needsCreate {
                commands.append(
                    (.init(command: .create(number: patterns.pattern, retained: false), customer: customer), .create))
            }
            // The plain customer holds each pattern once for all its filters (`a` and `a/#` both hold `a`). The
            // parent is subscribed first, so that the filter's own SUB, whose reply makes its reason code, comes last.
            var newlyHeld: [String] = []
            for pattern in (parent.map { [$0] } ?? []) + [patterns.pattern] {
                if key.group == nil {
                    let held = previous.map { Self.holds($0, pattern) } ?? false
                    if !held {
                        client.patternHolders[pattern, default: 0] += 1
                        newlyHeld.append(pattern)
                    }
                }
                let isMain = pattern == patterns.pattern
                let undo = MQTTConnection.SubscribeUndo(key: key, previous: previous, newlyHeld: newlyHeld)
                commands.append(
                    (
                        .init(
                            command: .subscribe(pattern: pattern, from: nil, group: key.group), customer: customer,
                            sendsRetained: sendsRetained),
                        isMain ? .subscribe(index: index, qos: entry.options.qos, last: false, undo: undo) : .nothing
                    ))
            }
        }
        guard !commands.isEmpty else {
            // Every filter refused before any command: the SUBACK goes out in its turn.
            let subscribing = front.subscribing!
            front.subscribing = nil
            respond(session, front, .suback(subAck(subscribing, front)))
            return
        }
        // The SUBACK goes with the last command's reply (the last filter's own SUB).
        if case .subscribe(let index, let qos, _, let undo) = commands[commands.count - 1].1 {
            commands[commands.count - 1].1 = .subscribe(index: index, qos: qos, last: true, undo: undo)
        }
        for (command, expectation) in commands {
            front.pendingCommands.append(command)
            front.expectations.append(expectation)
        }
    }

    /// True when `subscription` holds `pattern` in its session's plain customer.
    private static func holds(_ subscription: MQTTSubscription, _ pattern: String) -> Bool {
        subscription.patterns.pattern == pattern
            || (subscription.parentSubscribed && subscription.patterns.parent == pattern)
    }

    /// Why the client may not subscribe to `pattern` (its user's rights), checked before any command.
    private func subscribeRefusal(_ pattern: String, _ client: ClientState) -> ProtocolError? {
        do throws(ProtocolError) {
            try CommandPolicy.authorize(.subscribe(pattern: pattern, from: nil, group: nil), for: client)
        } catch {
            return error
        }
        return nil
    }

    /// A filter refused before its commands: its reason code (3.1.1: the failure code).
    private func refuseFilter(_ index: Int, _ code: UInt8, _ why: String, _ front: MQTTConnection) {
        front.subscribing?.reasonCodes[index] = front.version == .v5 ? code : MQTTReasonCode.subscribeFailure311
        if front.subscribing?.reason == nil { front.subscribing?.reason = why }
        stats.mqttRefused += 1
    }

    /// A `SUB` of a SUBSCRIBE was answered: its filter's reason code; with the last one, the SUBACK and then the
    /// retained values the subscriptions pushed.
    func subscribed(
        index: Int, granted: MQTTQoS, _ result: Result<Reply, ProtocolError>, _ session: Session,
        _ front: MQTTConnection, last: Bool, undo: MQTTConnection.SubscribeUndo?
    ) {
        switch result {
        case .success:
            front.subscribing?.reasonCodes[index] = granted.rawValue
        case .failure(let error):
            let refusal = front.createRefusal.map { created in error.code == .notFound ? created : error } ?? error
            front.createRefusal = nil
            refuseFilter(index, Self.mqttReasonCode(for: refusal), refusal.message, front)
            // The filter's subscription did not happen: the session's record goes back to what it was.
            if let undo, let client = front.client {
                _ = client.forget(undo.key)
                if let previous = undo.previous { client.record(previous) }
                for pattern in undo.newlyHeld {
                    let left = (client.patternHolders[pattern] ?? 1) - 1
                    client.patternHolders[pattern] = left > 0 ? left : nil
                }
            }
        }
        guard last, let subscribing = front.subscribing else { return }
        front.subscribing = nil
        var bytes: [UInt8] = []
        MQTTEncoder.encode(.suback(subAck(subscribing, front)), version: front.version, into: &bytes)
        _ = session.queueMQTT(bytes, isDelivery: false)
        let retained = front.retainedAfterSuback
        front.retainedAfterSuback.removeAll()
        front.client?.sendRetained(retained)
    }

    /// The SUBACK of a SUBSCRIBE's reason codes.
    private func subAck(_ subscribing: MQTTConnection.Subscribing, _ front: MQTTConnection) -> MQTTSubAck {
        var properties = MQTTProperties()
        if let reason = subscribing.reason, front.version == .v5, front.sendsProblemInformation {
            properties.reasonString = reason
        }
        return MQTTSubAck(
            packetID: subscribing.packetID, reasonCodes: subscribing.reasonCodes, properties: properties)
    }

    /// UNSUBSCRIBE: each filter's subscription forgotten, and its patterns unsubscribed in the center when no other
    /// filter of the session holds them; UNSUBACK after the last `UNSUB` (5.0: 0x11 for a filter without a
    /// subscription).
    func mqttUnsubscribe(
        _ unsubscribe: MQTTUnsubscribe, _ session: Session, _ front: MQTTConnection, _ client: MQTTClientSession
    ) {
        var codes: [UInt8] = []
        var commands: [MQTTConnection.PendingCommand] = []
        for filter in unsubscribe.filters {
            let shared = try? MQTTTopicMap.sharedSubscription(filter)
            let key = MQTTSubscriptionKey(filter: shared?.filter ?? filter, group: shared?.group)
            let customer = client.customer(for: key)
            guard let removed = client.forget(key) else {
                codes.append(MQTTReasonCode.noSubscriptionExisted)
                continue
            }
            codes.append(MQTTReasonCode.success)
            let patterns = [removed.patterns.pattern] + (removed.parentSubscribed ? [removed.patterns.parent!] : [])
            for pattern in patterns {
                if key.group == nil {
                    let left = (client.patternHolders[pattern] ?? 1) - 1
                    client.patternHolders[pattern] = left > 0 ? left : nil
                    guard left <= 0 else { continue }
                }
                commands.append(.init(command: .unsubscribe(pattern: pattern), customer: customer))
            }
        }
        var bytes: [UInt8] = []
        let ack = MQTTUnsubAck(packetID: unsubscribe.packetID, reasonCodes: front.version == .v5 ? codes : [])
        MQTTEncoder.encode(.unsuback(ack), version: front.version, into: &bytes)
        guard !commands.isEmpty else {
            front.expectations.append(.bytes(bytes))
            session.queue(.ok())
            return
        }
        for (index, command) in commands.enumerated() {
            front.pendingCommands.append(command)
            front.expectations.append(index == commands.count - 1 ? .bytes(bytes) : .nothing)
        }
    }
}
