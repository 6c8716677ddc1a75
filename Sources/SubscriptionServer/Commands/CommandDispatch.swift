import SubscriptionProtocol

extension Server {
    /// Runs one parsed command for `session`: the policy first, then the verb's handler (one file each, in this
    /// folder); the reply, or the error, is queued after any pushes the command caused. While the session has values
    /// waiting for their save, a command that is not itself a value to stage waits for their answers
    /// (``stageBehindStagedValues(_:for:)``).
    func run(_ command: consuming Command, for session: Session) {
        if session.stagedValues > 0 {
            if !stageBehindStagedValues(command, for: session) { session.waitingCommand = .success(command) }
            return
        }
        let context = CommandContext(session: session, server: self)
        let reply: Reply
        do throws(ProtocolError) {
            try CommandPolicy.authorize(command, for: session)
            switch consume command {
            case .hello(let name, let token): reply = try HelloCommand.run(name: name, token: token, context)
            case .create(let number, let retained): reply = try CreateCommand.run(number, retained: retained, context)
            case .remove(let number): reply = try RemoveCommand.run(number, context)
            case .subscribe(let pattern, let from, let group):
                reply = try SubscribeCommand.run(pattern, from: from, group: group, context)
            case .unsubscribe(let pattern): reply = UnsubscribeCommand.run(pattern, context)
            case .publish(let number, let payload, let info):
                reply = try PublishCommand.run(number, payload: payload, info: info, context)
            case .send(let number, let payload):
                reply = try PublishCommand.run(number, payload: payload, info: [], context)
            case .list(let pattern, let kinds): reply = try ListCommand.run(pattern, kinds: kinds, context)
            case .get(let number): reply = try GetCommand.run(number, context)
            case .stats: reply = StatsCommand.run(context)
            case .ping(let text): reply = .pong(text)
            case .quit: reply = QuitCommand.run(context)
            }
        } catch {
            if error.code == .denied { stats.denied += 1 }
            session.queueError(error)
            return
        }
        switch reply {
        case .later, .staged: return
        default: session.queue(reply)
        }
    }
}

extension Server {
    /// Behind a session's staged values, the one kind of command that runs at once: a permitted `PUB`/`SEND` to a
    /// retained number whose value this node saves, staged too (true). Anything else, refusals included, returns
    /// false and waits in ``Session/waitingCommand`` until they are answered, so its answer follows theirs.
    private func stageBehindStagedValues(_ command: Command, for session: Session) -> Bool {
        guard (try? CommandPolicy.authorize(command, for: session)) != nil else { return false }
        switch command {
        case .publish(let number, let payload, let info):
            return (try? stage(number, payload: payload, info: info, for: session)) != nil
        case .send(let number, let payload):
            return (try? stage(number, payload: payload, info: [], for: session)) != nil
        default:
            return false
        }
    }
}
