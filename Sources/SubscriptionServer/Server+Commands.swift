import SubscriptionCenter
import SubscriptionProtocol

/// What each command does: the bridge from parsed commands to the center, and from the center's answers to
/// replies. The reply is queued after any pushes the command caused, so it is never split by one.
extension Server {
    /// Runs one parsed command for `session` and queues its reply.
    func handle(_ command: Command, from session: Session) {
        if !session.isAuthenticated {
            switch command {
            case .hello, .ping, .quit: break
            default:
                session.appendReply {
                    ReplyEncoder.error(ProtocolError(.auth, "authentication required: send HELLO token=<secret> first"), into: &$0)
                }
                return
            }
        }
        do {
            switch command {
            case .hello(let name, let token):
                if let required = configuration.authToken {
                    // Once authenticated, HELLO without a token only changes the name.
                    if let token, token != required { throw ProtocolError(.auth, "wrong token") }
                    if token == nil && !session.isAuthenticated {
                        throw ProtocolError(.auth, "this server needs HELLO token=<secret>")
                    }
                }
                session.isAuthenticated = true
                if let name { session.name = name }
                let text = "subd \(SubdVersion.current) proto=1 session=\(session.id)"
                session.appendReply { ReplyEncoder.ok(text, into: &$0) }

            case .create(let number):
                let created = try center.create(number)
                session.appendReply { ReplyEncoder.ok(created ? "created" : "exists", into: &$0) }

            case .remove(let number):
                let told = try center.remove(number)
                for customer in told { (customer as? Session)?.sendGone(number) }
                session.appendReply { ReplyEncoder.ok("removed \(told.count)", into: &$0) }

            case .subscribe(let pattern, let from):
                try center.add(session, to: pattern, from: from)
                session.appendReply { ReplyEncoder.ok(nil, into: &$0) }

            case .unsubscribe(let pattern):
                center.remove(session, from: pattern)
                session.appendReply { ReplyEncoder.ok(nil, into: &$0) }

            case .publish(let number, let payload), .send(let number, let payload):
                let receivers = try publish(payload, to: number, from: session.name)
                session.appendReply { ReplyEncoder.okCount(receivers, into: &$0) }

            case .list(let pattern):
                let lines = try center.list(matching: pattern ?? ">").map { "\($0.number) \($0.subscribers)" }
                session.appendReply { ReplyEncoder.list(lines, into: &$0) }

            case .stats:
                let lines = statsLines()
                session.appendReply { ReplyEncoder.list(lines, into: &$0) }

            case .ping(let text):
                session.appendReply { ReplyEncoder.pong(text, into: &$0) }

            case .quit:
                session.appendReply { ReplyEncoder.ok("bye", into: &$0) }
                session.requestClose(.client)
            }
        } catch let error as ProtocolError {
            session.appendReply { ReplyEncoder.error(error, into: &$0) }
        } catch let error as CenterError {
            let reply = Self.protocolError(for: error)
            session.appendReply { ReplyEncoder.error(reply, into: &$0) }
        } catch {
            preconditionFailure("unexpected error from a command: \(error)")
        }
    }

    /// Frames the message once and lets the center fan the one frame out. Returns the receivers.
    private func publish(_ payload: ArraySlice<UInt8>, to number: String, from sender: String?) throws(CenterError) -> Int {
        let size = ReplyEncoder.messageFrameSize(number: number, payloadCount: payload.count, from: sender)
        let frame = Frame.make(capacity: size)
        frame.count = payload.withUnsafeBytes {
            ReplyEncoder.writeMessageFrame(number: number, payload: $0, from: sender, to: frame.base)
        }
        let receivers = try center.send(frame, to: number, from: sender)
        stats.messagesPublished += 1
        stats.messagesDelivered += UInt64(receivers)
        return receivers
    }

    /// The STATS lines, `key value`.
    private func statsLines() -> [String] {
        let uptime = ContinuousClock.now - startedAt
        let stats = currentStats()
        return [
            "version \(SubdVersion.current)",
            "uptime_seconds \(uptime.components.seconds)",
            "connections \(stats.connections)",
            "total_connections \(stats.totalConnections)",
            "numbers \(stats.numbers)",
            "subscriptions \(stats.subscriptions)",
            "messages_published \(stats.messagesPublished)",
            "messages_delivered \(stats.messagesDelivered)",
            "bytes_in \(stats.bytesIn)",
            "bytes_out \(stats.bytesOut)",
            "slow_consumers \(stats.slowConsumers)",
            "protocol_errors \(stats.protocolErrors)",
            "refused_connections \(stats.refusedConnections)",
        ] + CloseReason.allCases.filter { $0 != .slowConsumer }.map { "closed_\($0.rawValue) \(stats.closed[$0] ?? 0)" }
    }

    /// The wire error for a center error (codes from shared/PROTOCOL.md).
    static func protocolError(for error: CenterError) -> ProtocolError {
        switch error {
        case .invalidName(let name, let problem):
            return ProtocolError(.name, "invalid name '\(name)': \(problem)")
        case .notFound(let number):
            return ProtocolError(.notFound, "no subscription number '\(number)' (CREATE it first)")
        case .limit(let what):
            return ProtocolError(.limit, what)
        }
    }
}
