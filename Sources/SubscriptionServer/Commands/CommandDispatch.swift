import SubscriptionCommands
import SubscriptionProtocol

extension Server {
    /// Runs one parsed command for `session` through ``CommandDispatch`` (the policy, then the verb's handler), with
    /// this node's environment: a cluster node's with `cluster:`, a single node's otherwise; the reply, or the error,
    /// is queued after any pushes the command caused. While the session has values waiting for their save, a command
    /// that is not itself a value to stage waits for their answers (``stageBehindStagedValues(_:for:)``); while it has
    /// replies in flight, one that may not run ahead of them waits for them (``runsAhead(_:of:)``).
    func run(_ command: consuming Command, for session: Session) {
        if session.stagedValues > 0 {
            if !stageBehindStagedValues(command, for: session) { session.waitingCommand = .success(command) }
            return
        }
        if !session.repliesInFlight.isEmpty, !runsAhead(command, of: session) {
            session.waitingCommand = .success(command)
            return
        }
        let reply: Reply
        do throws(ProtocolError) {
            // A stored flag read first: reading the link itself would retain and release it on every command.
            if isClustered, let cluster {
                let environment = ClusterNodeEnvironment(server: self, session: session, cluster: cluster)
                reply = try CommandDispatch.run(
                    command, client: &session.client, center: center, environment: environment)
            } else {
                let environment = NodeEnvironment(server: self, session: session)
                reply = try CommandDispatch.run(
                    command, client: &session.client, center: center, environment: environment)
            }
        } catch {
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
        guard (try? CommandPolicy.authorize(command, for: session.client)) != nil else { return false }
        let sender = session.client.name
        switch command {
        case .publish(let number, let payload, let info):
            return (try? stage(number, payload: payload, info: info, sender: sender, for: session)) != nil
        case .send(let number, let payload):
            return (try? stage(number, payload: payload, info: [], sender: sender, for: session)) != nil
        default:
            return false
        }
    }
}
