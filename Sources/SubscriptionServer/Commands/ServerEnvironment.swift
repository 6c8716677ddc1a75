import SubscriptionCenter
import SubscriptionCommands
import SubscriptionProtocol
import SubscriptionWire

/// What a session's customer in the center is besides a ``Customer``: where a retained number's current value is
/// pushed on `SUB` and `GET`. The line protocol's session is its own customer; an MQTT client's is its
/// ``MQTTCustomer`` (one per session, and one per shared subscription), which outlives the connection.
protocol SessionCustomer: Customer<Publication>, Sendable {
    /// Queues a retained number's current value, before the command's reply.
    func push(_ value: Publication)
}

/// What a single node's and a cluster node's ``CommandEnvironment`` share: one session of one server, its output,
/// the settings, the saved state, `$SYS.` and the counters. A value made for each command on the loop's queue (where
/// the server and the session live), holding both strongly; specialized, its calls cost no reference counting.
/// `Sendable` because an answer given later captures it: it is used on the loop's queue only.
protocol ServerEnvironment: CommandEnvironment, Sendable where Client: SessionCustomer {
    /// The server the command runs in.
    var server: Server { get }
    /// The session (the connection) that sent the command: its output, its hold, its client state.
    var session: Session { get }
}

extension ServerEnvironment {
    // MARK: The session

    var sessionID: UInt64 { session.id }
    var queuedBytes: Int { session.output.heldBytes }
    var maxPending: Int { session.maxPending }

    func push(_ value: Publication) { customer.push(value) }

    func hold() { session.hold() }

    func release(after seconds: Double) { session.release(after: seconds) }

    func close(_ reason: CloseRequest) {
        switch reason {
        case .quit: session.requestClose(.client)
        case .authFailures: session.requestClose(.authFailures)
        }
    }

    /// Holds the session (its output and the commands behind wait, in order), calls `start` with the function that
    /// queues the reply (or the error), releases the session and ends the turn. Nothing happens for a session closed
    /// meanwhile. A reply that is itself ``Reply/later`` comes from a command run again after a cluster lookup: when
    /// that command waits for an answer of its own (a retained number's `PUB` waiting for its bucket write), the
    /// session stays held for that inner answer to release; when its reply waits in flight (a plain `PUB` waiting
    /// for confirmations, which holds nothing) or the inner answer came at once, the session is released here if
    /// still held.
    func answerLater(_ start: (_ answer: @escaping @Sendable (Result<Reply, ProtocolError>) -> Void) -> Void) -> Reply {
        let session = session
        let server = server
        session.hold()
        session.answersAwaited += 1
        start { result in
            session.answersAwaited -= 1
            guard session.machine.phase != .closed else { return }
            switch result {
            case .success(.later):
                guard session.answersAwaited == 0, session.machine.isOutputHeld else { return }
            case .success(.staged): break  // answered after the end-of-turn save
            case .success(let reply): session.queue(reply)
            case .failure(let error): session.queueError(error)
            }
            session.release()
            server.loop.endOfTurn()
        }
        return .later
    }

    // MARK: Settings and users

    var serverVersion: String { SubdVersion.current }
    var authToken: String? { server.configuration.authToken }
    var hasUsers: Bool { !server.users.isEmpty }
    var requiresAuthentication: Bool { server.requiresAuthentication }
    var authFailureDelay: Double { server.configuration.authFailureDelay }

    func isUser(_ name: String) -> Bool { server.users[ExactName(name)] != nil }

    func verify(_ secret: String, as name: String) -> Reply {
        SecretVerification.verify(secret, as: name, self)
        return .later
    }

    func statsLines() -> [String] {
        server.currentStats().lines(uptime: ContinuousClock.now - server.startedAt)
    }

    // MARK: Saved state

    func stage(
        _ number: String, payload: ArraySlice<UInt8>, info: [InfoPair], sender: String?
    ) throws(ProtocolError) -> Reply? {
        // A stored flag read first: most publications are not staged.
        guard server.savesState else { return nil }
        return try server.stage(number, payload: payload, info: info, sender: sender, for: session)
    }

    func saveCreated(_ number: String, retained: Bool) throws(ProtocolError) {
        try server.saveCreated(number, retained: retained)
    }

    func saveRemoved(_ number: String) throws(ProtocolError) {
        try server.saveRemoved(number)
    }

    // MARK: $SYS and counters

    func post(_ event: SystemEvent, by client: ClientState) {
        let identity = server.identity(of: session, name: client.name)
        switch event {
        case .numberCreated(let number, let retained):
            let kind = retained ? "retained" : "plain"
            server.post(.numberCreated, JSONObject([("number", .string(number)), ("kind", .string(kind))] + identity))
            server.mqttNumberCreated(number)
        case .numberRemoved(let number, let told):
            server.post(
                .numberRemoved,
                JSONObject([("number", .string(number)), ("subscribers_told", .integer(Int64(told)))] + identity))
        }
    }

    func countPublished(to number: String, receivers: Int) {
        let server = server
        server.stats.messagesPublished += 1
        server.stats.messagesDelivered += UInt64(receivers)
        server.numberCounters.published(to: number)
    }

    func countAuthFailure(_ error: ProtocolError, failures: Int) {
        server.stats.authFailures += 1
        server.logger.warning(
            "HELLO failed: \(error.message)",
            metadata: [
                "session": "\(session.id)", "address": "\(session.peerAddress)", "failures": "\(failures)",
            ])
    }

    func countDenied() { server.stats.denied += 1 }

    /// The center's fan-out, as a single node's default (``CommandEnvironment``'s), with the MQTT part of an MQTT
    /// client's publication attached to it (``Server/attachMQTT(to:)``). A closure, not a local function, as there.
    func send(
        _ number: String, sender: String?, info: [InfoPair], payload: ArraySlice<UInt8>,
        in center: SubscriptionCenter<Publication>
    ) throws(CenterError) -> Delivery {
        let attaches = server.isPublishingMQTT
        let receivers = try center.send(to: number, from: sender) { (revision: UInt64?) in
            let publication = payload.withUnsafeBytes {
                Publication.make(number: number, sender: sender, revision: revision, info: info, payload: $0)
            }
            if attaches { server.attachMQTT(to: publication) }
            return publication
        }
        return Delivery(receivers: receivers)
    }
}

/// A single node's environment: what is not the center is this server's alone (the other-node requirements keep
/// ``CommandEnvironment``'s single-node implementations). `customer` is the session itself for the line protocol.
struct NodeEnvironment<Client: SessionCustomer>: ServerEnvironment {
    let server: Server
    let session: Session
    let customer: Client
}

extension NodeEnvironment where Client == Session {
    /// The line protocol's session, its own customer.
    init(server: Server, session: Session) {
        self.init(server: server, session: session, customer: session)
    }
}
