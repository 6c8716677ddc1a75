/// Everything a ``ReconnectingClient`` knows of its link to the servers, behind its lock: a plain value whose methods
/// decide, while the client does the I/O.
struct LinkState {
    /// Where the link is.
    enum Phase {
        /// No connection: one is being made (or waited for); commands go to the outbound buffer.
        case connecting
        /// Connected; `generation` counts the connections made (1 for the first).
        case connected(SubscriptionClient, generation: Int)
        /// ``ReconnectingClient/close()`` was called.
        case closed
    }

    /// What a command waits for: the reply, with the `MSG` push that answered a `GET`.
    struct Answer: Sendable {
        let reply: ServerReply
        let value: ReceivedMessage?
    }

    /// A command and its caller.
    struct Request: Sendable {
        let id: Int
        let bytes: [UInt8]
        /// For a `GET`: the number whose push answers it.
        let capturing: String?
        let pending: Pending<Answer>
    }

    /// Where a command goes now.
    enum Route {
        case send(Connection)
        case held
        case refused(ClientError)
    }

    /// The next step of setting up a new connection.
    enum InstallStep {
        /// Subscribe these observations on it first.
        case restore([ObservationEntry])
        /// It is the connection now; send these held commands on it, in this order.
        case done([Request])
        /// The client was closed meanwhile.
        case closed
    }

    var phase = Phase.connecting
    /// The connections made so far.
    var generation = 0
    var schedule: ReconnectSchedule
    var buffer: OutboundBuffer<Request>
    /// The observations and watches in use, by id.
    var observations: [Int: ObservationEntry] = [:]
    /// The observations subscribed on the connection being set up.
    var restored: Set<Int> = []
    private var nextID = 0
    private var listeners: [Int: AsyncStream<ConnectionEvent>.Continuation] = [:]

    init(schedule: ReconnectSchedule, buffer: OutboundBuffer<Request>) {
        self.schedule = schedule
        self.buffer = buffer
    }

    mutating func makeID() -> Int {
        nextID += 1
        return nextID
    }

    /// Where `command` goes: on the connection, into the buffer (when it fits), or back to its caller.
    mutating func route(_ command: Request) -> Route {
        switch phase {
        case .connected(let client, _):
            return .send(client.connection)
        case .connecting:
            guard buffer.append(command, id: command.id, size: command.bytes.count) else {
                return .refused(.outboundBufferFull(bytes: command.bytes.count, limit: buffer.limit))
            }
            return .held
        case .closed:
            return .refused(.connectionLost)
        }
    }

    /// A new connection, number `generation`: starts its set-up.
    mutating func beginInstall() -> Int {
        generation += 1
        restored = []
        return generation
    }

    /// The next step of setting up `client`: the observations not subscribed on it yet, or, once there are none, it
    /// becomes the connection and the held commands are handed over (all in one step under the lock, so no later
    /// command overtakes them).
    mutating func nextInstallStep(_ client: SubscriptionClient, generation: Int) -> InstallStep {
        guard case .connecting = phase else { return .closed }
        let missing = observations.values.filter { !restored.contains($0.id) }.sorted { $0.id < $1.id }
        guard missing.isEmpty else { return .restore(missing) }
        phase = .connected(client, generation: generation)
        schedule.connected()
        report(.connected(client.endpoint))
        return .done(buffer.removeAll())
    }

    /// The connection `generation` ended: true when it was the current one (the client then reconnects).
    mutating func lost(_ endpoint: Endpoint, generation: Int, error: ClientError) -> Bool {
        guard case .connected(_, let current) = phase, current == generation else { return false }
        phase = .connecting
        report(.disconnected(endpoint, error))
        return true
    }

    /// An attempt to connect to `endpoint` failed: the wait before the next, or nil when the client was closed.
    mutating func attemptFailed(_ endpoint: Endpoint, error: ClientError) -> Duration? {
        guard case .connecting = phase else { return nil }
        schedule.failed()
        var random = SystemRandomNumberGenerator()
        let delay = schedule.delay(using: &random)
        report(.attemptFailed(endpoint, error, retryIn: delay))
        return delay
    }

    /// Tells every listener.
    func report(_ event: ConnectionEvent) {
        for listener in listeners.values { listener.yield(event) }
    }

    /// Adds a listener of the events; nil when the client is closed.
    mutating func addListener(_ listener: AsyncStream<ConnectionEvent>.Continuation) -> Int? {
        if case .closed = phase { return nil }
        let id = makeID()
        listeners[id] = listener
        return id
    }

    mutating func removeListener(_ id: Int) {
        listeners[id] = nil
    }

    /// What closing leaves to do outside the lock.
    struct Ending {
        /// The connection, to close.
        var client: SubscriptionClient?
        var held: [Request] = []
        var entries: [ObservationEntry] = []
        var listeners: [AsyncStream<ConnectionEvent>.Continuation] = []

        /// Fails the held commands, ends the observations waiting for a connection, and ends the event streams.
        func run() {
            for command in held { command.pending.finish(.failure(.connectionLost)) }
            for entry in entries { entry.end(nil) }
            for listener in listeners { listener.finish() }
        }
    }

    /// Closes the link (once): what is left to do.
    mutating func close() -> Ending {
        if case .closed = phase { return Ending() }
        var ending = Ending()
        if case .connected(let client, _) = phase { ending.client = client }
        phase = .closed
        report(.closed)
        ending.held = buffer.removeAll()
        ending.entries = Array(observations.values)
        observations = [:]
        ending.listeners = Array(listeners.values)
        listeners = [:]
        return ending
    }
}
