import SubscriptionProtocol

extension Server {
    /// Runs one parsed command for `session`: the policy first, then the verb's handler (one file each, in this
    /// folder); the reply, or the error, is queued after any pushes the command caused. While the session has values
    /// waiting for their save, only a permitted `PUB`/`SEND` runs (staged too, or made to wait by
    /// ``stage(_:payload:info:for:)``); any other command, or one the policy refuses, waits for their answers
    /// (``Session/waitingCommand``), so its reply comes after theirs.
    func run(_ command: consuming Command, for session: Session) {
        if session.stagedValues > 0 && !command.isPublication {
            session.waitingCommand = .success(command)
            return
        }
        let context = CommandContext(session: session, server: self)
        let reply: Reply
        do throws(ProtocolError) {
            do {
                try CommandPolicy.authorize(command, for: session)
            } catch  where session.stagedValues > 0 {
                session.waitingCommand = .success(command)
                return
            }
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

extension Command {
    /// True for `PUB` and `SEND`.
    fileprivate var isPublication: Bool {
        switch self {
        case .publish, .send: return true
        default: return false
        }
    }
}
