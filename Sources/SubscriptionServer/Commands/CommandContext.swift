import SubscriptionCenter
import SubscriptionProtocol

/// What a command handler works with: the session it runs for and the server's center, settings and counters.
///
/// Both references are `unowned(unsafe)`: a context lives only while its command runs, on the server's queue, where
/// the server and the session are alive; checked references would cost atomic operations on every command.
struct CommandContext {
    /// The session that sent the command.
    unowned(unsafe) let session: Session
    /// The server it runs in.
    unowned(unsafe) let server: Server

    /// The subscription service center.
    var center: SubscriptionCenter<Publication> { server.center }

    /// The configuration in force.
    var configuration: ServerConfiguration { server.configuration }

    /// Answers a command later, once an asynchronous step (the cluster's bucket) has given the reply: holds the
    /// session (its output and the commands behind wait, in order), calls `start` with the function that queues the
    /// reply (or the error), releases the session and ends the turn. Nothing happens for a session closed meanwhile.
    /// A reply that is itself ``Reply/later`` (a command run again after a cluster lookup that then waits for a
    /// bucket write: a retained number's `PUB`) leaves the session held for that inner answer to release.
    /// Returns ``Reply/later`` for the handler to return.
    func replyLater(
        _ start: (_ answer: @escaping @Sendable (Result<Reply, ProtocolError>) -> Void) -> Void
    ) -> Reply {
        let session = session
        let server = server
        session.hold()
        start { result in
            guard session.machine.phase != .closed else { return }
            // A command run again inside the hold (a PUB after a bucket lookup) that answers later itself: that inner
            // answer keeps the session held and releases it.
            if case .success(.later) = result { return }
            switch result {
            case .success(.staged): break  // answered after the end-of-turn save
            case .success(let reply): session.queue(reply)
            case .failure(let error): session.queueError(error)
            }
            session.release()
            server.loop.endOfTurn()
        }
        return .later
    }

    /// Runs a center operation, turning its error into the wire's (docs/PROTOCOL.md, Error codes).
    func inCenter<Result>(
        _ body: (SubscriptionCenter<Publication>) throws(CenterError) -> Result
    ) throws(ProtocolError) -> Result {
        do {
            return try body(center)
        } catch {
            throw ProtocolError(error)
        }
    }
}

extension ProtocolError {
    /// The wire error for a center error.
    init(_ error: CenterError) {
        switch error {
        case .invalidName(let name, let problem):
            self.init(.name, "invalid name '\(name)': \(problem)")
        case .notFound(let number):
            self.init(.notFound, "no subscription number '\(number)' (CREATE it first)")
        case .limit(let what):
            self.init(.limit, what)
        }
    }
}
