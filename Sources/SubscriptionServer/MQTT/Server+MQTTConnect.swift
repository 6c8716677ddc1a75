import SubscriptionCommands
import SubscriptionMQTT
import SubscriptionProtocol
import SubscriptionSystem
import SubscriptionWire

/// CONNECT (docs/PROTOCOL.md, "MQTT", connecting): the client identifier, the credentials (subd's `users` and
/// `auth_token`, or a TLS client certificate naming a user), the will, the session (a new one, the one left by an
/// earlier connection of the same client identifier, or one taken over from a connection still open), then CONNACK.
extension Server {
    /// The longest client identifier accepted, in bytes (3.1.1 lets a server refuse any beyond 23 characters).
    static let mqttMaxClientIDBytes = 256

    /// Checks a CONNECT and answers it; a user's secret is checked off the loop first, the session held meanwhile.
    func mqttConnect(_ connect: MQTTConnect, _ session: Session, _ front: MQTTConnection) {
        front.version = connect.version
        front.phase = .connecting
        var clientID = connect.clientID
        var assigned = false
        if clientID.isEmpty {
            // 3.1.1: an empty identifier needs a clean session; 5.0: the server gives one.
            guard connect.version == .v5 || connect.cleanStart else {
                return refuseConnect(
                    session, front, v311: MQTTReasonCode.ConnectReturn311.identifierRejected,
                    v5: MQTTReasonCode.clientIdentifierNotValid, "an empty client identifier needs a clean session")
            }
            clientID = "subd-\(session.id)-\(String(UInt64.random(in: 1...UInt64.max), radix: 36))"
            assigned = true
        }
        guard clientID.utf8.count <= Self.mqttMaxClientIDBytes else {
            return refuseConnect(
                session, front, v311: MQTTReasonCode.ConnectReturn311.identifierRejected,
                v5: MQTTReasonCode.clientIdentifierNotValid,
                "a client identifier longer than \(Self.mqttMaxClientIDBytes) bytes")
        }
        if connect.properties.authenticationMethod != nil {
            return refuseConnect(
                session, front, v311: MQTTReasonCode.ConnectReturn311.notAuthorized,
                v5: MQTTReasonCode.badAuthenticationMethod,
                "no authentication method is supported (use a user name and password)")
        }
        // Who the client is: a TLS client certificate naming a user logged the session in already.
        if session.client.rights != nil {
            return finishConnect(connect, clientID: clientID, assigned: assigned, session, front)
        }
        if !users.isEmpty {
            guard let name = connect.username, let password = connect.password else {
                return refuseConnect(
                    session, front, v311: MQTTReasonCode.ConnectReturn311.notAuthorized,
                    v5: MQTTReasonCode.notAuthorized, "a user name and password are needed")
            }
            let secret = String(decoding: password, as: UTF8.self)
            let (clientID, assigned) = (clientID, assigned)
            session.hold()
            SecretVerification.check(secret, as: name, in: self) { [self] account in
                guard session.machine.phase != .closed else { return }
                session.release()
                guard let account else {
                    stats.authFailures += 1
                    logger.warning(
                        "MQTT CONNECT failed: wrong user name or password",
                        metadata: ["session": "\(session.id)", "address": "\(session.peerAddress)"])
                    return refuseConnect(
                        session, front, v311: MQTTReasonCode.ConnectReturn311.badUserNameOrPassword,
                        v5: MQTTReasonCode.badUserNameOrPassword, "wrong user name or password")
                }
                session.client.logIn(as: UserRights(account))
                finishConnect(connect, clientID: clientID, assigned: assigned, session, front)
            }
            return
        }
        if let token = configuration.authToken {
            guard let password = connect.password, String(decoding: password, as: UTF8.self) == token else {
                stats.authFailures += 1
                return refuseConnect(
                    session, front, v311: MQTTReasonCode.ConnectReturn311.badUserNameOrPassword,
                    v5: MQTTReasonCode.badUserNameOrPassword, "the password must be the auth_token")
            }
        }
        session.client.isAuthenticated = true
        if session.client.name == nil, (try? ClientName.check(clientID)) != nil, !assigned {
            session.client.name = clientID
        }
        finishConnect(connect, clientID: clientID, assigned: assigned, session, front)
    }

    /// The client is who it says: its will checked, its session found or made (taking it over from another
    /// connection), CONNACK sent, and what its session kept sent again.
    private func finishConnect(
        _ connect: MQTTConnect, clientID: String, assigned: Bool, _ session: Session, _ front: MQTTConnection
    ) {
        session.client.isAuthenticated = true
        if let will = connect.will {
            if let refusal = willRefusal(will, session.client) {
                return refuseConnect(
                    session, front, v311: MQTTReasonCode.ConnectReturn311.notAuthorized,
                    v5: Self.mqttReasonCode(for: refusal), refusal.message)
            }
            front.will = will
        }
        let settings = configuration.mqtt
        // The session's expiry: 3.1.1's persistent session lasts until mqtt_session_expiry; 5.0 asks for its own.
        let asked: UInt32 =
            connect.version == .v5 ? (connect.properties.sessionExpiryInterval ?? 0) : (connect.cleanStart ? 0 : .max)
        let expiry = min(asked, UInt32(clamping: settings.sessionExpiryMax))
        var sessionPresent = false
        let client: MQTTClientSession
        // A connection still on the session is taken over first. The session is resumed (5.0 section 3.1.2.4: it
        // is there when the CONNECT comes), also one whose expiry is 0: the old connection leaves it to the new one.
        if let existing = mqttSessions[clientID], let old = existing.connection, old !== session,
            let oldFront = old.mqtt
        {
            logger.info(
                "MQTT session of '\(clientID)' taken over", metadata: ["session": "\(old.id)", "by": "\(session.id)"])
            existing.handOver()
            mqttClose(old, oldFront, MQTTReasonCode.sessionTakenOver, "session taken over", reason: .takenOver)
            mqttConnectionEnded(old)
        }
        if let existing = mqttSessions[clientID] {
            if connect.cleanStart {
                endMQTTSession(existing)
                client = MQTTClientSession(clientID: clientID, server: self, version: connect.version)
                mqttSessions[clientID] = client
            } else {
                client = existing
                sessionPresent = true
            }
        } else {
            client = MQTTClientSession(clientID: clientID, server: self, version: connect.version)
            mqttSessions[clientID] = client
        }
        client.version = connect.version
        client.expiryInterval = expiry
        client.clientReceiveMaximum = Int(connect.properties.receiveMaximum ?? UInt16.max)
        client.clientMaximumPacketSize = connect.properties.maximumPacketSize.map { Int($0) } ?? .max
        front.client = client
        front.sendsProblemInformation = connect.properties.requestProblemInformation != 0
        var keepAlive = connect.keepAlive
        if settings.keepAliveMax > 0, keepAlive == 0 || Int(keepAlive) > settings.keepAliveMax {
            keepAlive = UInt16(clamping: settings.keepAliveMax)
        }
        front.keepAlive = keepAlive
        front.phase = .connected

        var ack = MQTTConnAck(sessionPresent: sessionPresent, reasonCode: 0)
        if connect.version == .v5 {
            if assigned { ack.properties.assignedClientIdentifier = clientID }
            if expiry != asked { ack.properties.sessionExpiryInterval = expiry }
            if keepAlive != connect.keepAlive { ack.properties.serverKeepAlive = keepAlive }
            if settings.receiveMaximum < Int(UInt16.max) {
                ack.properties.receiveMaximum = UInt16(clamping: settings.receiveMaximum)
            }
            ack.properties.maximumPacketSize = UInt32(clamping: mqttMaximumPacketSize)
            if settings.topicAliasMaximum > 0 {
                ack.properties.topicAliasMaximum = UInt16(clamping: settings.topicAliasMaximum)
            }
        }
        var bytes: [UInt8] = []
        MQTTEncoder.encode(.connack(ack), version: connect.version, into: &bytes)
        _ = session.queueMQTT(bytes, isDelivery: false)
        stats.mqttConnects += 1
        logger.debug(
            "MQTT client connected",
            metadata: [
                "session": "\(session.id)", "client_id": "\(clientID)", "version": "\(connect.version)",
                "session_present": "\(sessionPresent)",
            ])
        client.attach(session)
    }

    /// Why the will may not be published by this client: its topic has no number, or the client may not publish
    /// to it; nil when it may.
    func willRefusal(_ will: MQTTWill, _ client: ClientState) -> ProtocolError? {
        let number: String
        do throws(MQTTTopicError) {
            number = try MQTTTopicMap.number(forTopic: will.topic)
        } catch {
            return ProtocolError(.name, "the will's topic: \(error.message)")
        }
        do throws(ProtocolError) {
            try CommandPolicy.authorize(.publish(number: number, payload: [], info: []), for: client)
        } catch {
            return error
        }
        return nil
    }

    /// Refuses the CONNECT with its return code (3.1.1) or reason code (5.0) and closes the connection.
    private func refuseConnect(
        _ session: Session, _ front: MQTTConnection, v311: UInt8, v5: UInt8, _ why: String
    ) {
        logger.info(
            "MQTT CONNECT refused: \(why)", metadata: ["session": "\(session.id)", "address": "\(session.peerAddress)"])
        stats.mqttRefused += 1
        var ack = MQTTConnAck(reasonCode: front.version == .v5 ? v5 : v311)
        if front.version == .v5 { ack.properties.reasonString = why }
        var bytes: [UInt8] = []
        MQTTEncoder.encode(.connack(ack), version: front.version, into: &bytes)
        _ = session.queueMQTT(bytes, isDelivery: false)
        front.phase = .ended
        session.requestClose(.protocolError)
    }
}
