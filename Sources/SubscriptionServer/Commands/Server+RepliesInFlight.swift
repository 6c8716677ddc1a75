import SubscriptionCommands
import SubscriptionProtocol

/// Pipelined confirmations (docs/CLUSTER.md, step 4): a publication whose `+OK <receivers>` waits for other nodes'
/// confirmations does not hold its session. The session goes on reading, and its later publications run and wait
/// concurrently, at most `ack_window` of them (``ClusterLink/ackWindow``); their replies, and those of the commands
/// behind them, leave in command order (``RepliesInFlight``). Any other command waits in ``Session/waitingCommand``
/// until every reply ahead of it is out, so what it answers or pushes follows them (a `GET`'s value, a `SUB`'s retained
/// values, a `QUIT`'s goodbye); a publication past the window waits there until a quarter of the window is free
/// again, and nothing more is read from the session meanwhile (the client's socket fills: back-pressure, as for a
/// full output).
extension Server {
    /// True when `command` may run now although `session` has replies in flight: a `PUB` or `SEND` while fewer than
    /// `ack_window` wait.
    func runsAhead(_ command: borrowing Command, of session: Session) -> Bool {
        switch command {
        case .publish, .send: session.repliesInFlight.count < (cluster?.ackWindow ?? 1)
        default: false
        }
    }

    /// Slot `slot` of `session` has its reply: it goes out with those ready behind it, and a command that waited for
    /// them runs on the loop's next turn once it may. The caller ends the turn (the bridge, once per turn).
    func answerInFlight(_ slot: UInt64, of session: Session, with reply: Result<Reply, ProtocolError>) {
        session.answer(slot, with: reply)
        guard session.stagedValues == 0, let waiting = session.waitingCommand, session.machine.phase == .open else {
            return
        }
        let mayRun: Bool
        if session.repliesInFlight.isEmpty {
            mayRun = true
        } else if case .success(let command) = waiting, runsAhead(command, of: session) {
            // A publication past the window goes on once a quarter of the window is free, not at each answer: one
            // resume then runs a batch of publications, not one.
            let window = cluster?.ackWindow ?? 1
            mayRun = session.repliesInFlight.count <= window - max(1, window / 4)
        } else {
            mayRun = false
        }
        if mayRun { resumeOnNextTurn(session) }
    }
}
