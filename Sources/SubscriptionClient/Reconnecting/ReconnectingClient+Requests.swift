import SubscriptionWire

/// The commands of a ``ReconnectingClient``: NotificationHub's `create`, `remove`, `post` and `value(of:)`, over the
/// network. Each is sent at once when connected, else held in the outbound buffer until the next connection, and
/// waits for its reply at most ``ReconnectingClient/Options/requestTimeout``.
extension ReconnectingClient {
    /// Creates `number`, retained (it keeps its latest post as its value) or plain. Returns true when it was created,
    /// false when it existed already (it then keeps the kind it has).
    ///
    /// ```swift
    /// try await client.create("CART.changes")
    /// try await client.create("CART.count", retained: true)
    /// ```
    ///
    /// - Throws: ``ClientError/denied(_:)`` for a user without the right to create; the errors every command may
    ///   throw (``ClientError/timeout(verb:after:)``, ``ClientError/outboundBufferFull(bytes:limit:)``,
    ///   ``ClientError/connectionLost``).
    @discardableResult
    public func create(_ number: String, retained: Bool = false) async throws(ClientError) -> Bool {
        let answer = try await request("CREATE", try Command.create(number, retained: retained))
        return try SubscriptionClient.created(try SubscriptionClient.okText(.success(answer.reply), "CREATE"))
    }

    /// Removes `number`. Returns how many subscribers were told (`GONE`): their observations of it end.
    ///
    /// - Throws: ``ClientError/notFound(_:)`` when there is no such number.
    @discardableResult
    public func remove(_ number: String) async throws(ClientError) -> Int {
        let answer = try await request("REMOVE", try Command.remove(number))
        return try SubscriptionClient.removed(try SubscriptionClient.okText(.success(answer.reply), "REMOVE"))
    }

    /// Posts `payload` (any bytes) to `number` with the info pairs `info` (the notification's `userInfo`), and
    /// returns how many sessions received it. The sender (`from`) is the client's ``name``.
    ///
    /// ```swift
    /// try await client.post("CART.changes", info: [InfoPair(key: "unit", value: "items")], payload: [0x31])
    /// ```
    ///
    /// - Throws: ``ClientError/notFound(_:)`` when the number does not exist, ``ClientError/denied(_:)`` when the
    ///   user may not publish to it, ``ClientError/invalidInfo(_:)`` (nothing sent), and the errors every command may
    ///   throw.
    @discardableResult
    public func post(_ number: String, info: [InfoPair] = [], payload: [UInt8] = []) async throws(ClientError) -> Int {
        let answer = try await request("PUB", try Command.pub(number, payload, info: info))
        return try SubscriptionClient.receivers(try SubscriptionClient.okText(.success(answer.reply), "PUB"))
    }

    /// Posts the UTF-8 bytes of `text` to `number`, as ``post(_:info:payload:)`` does.
    ///
    /// ```swift
    /// try await client.post("CART.changes", text: "plus")
    /// ```
    @discardableResult
    public func post(_ number: String, info: [InfoPair] = [], text: String) async throws(ClientError) -> Int {
        try await post(number, info: info, payload: Array(text.utf8))
    }

    /// The current value of the retained number `number`, or nil when nothing was posted to it yet.
    ///
    /// - Throws: ``ClientError/notFound(_:)`` when the number does not exist, ``ClientError/proto(_:)`` when it is a
    ///   plain number.
    public func value(of number: String) async throws(ClientError) -> RetainedValue? {
        let answer = try await request("GET", try Command.get(number), capturing: number)
        return try SubscriptionClient.retainedValue(reply: answer.reply, pushed: answer.value, of: number)
    }

    /// Sends `PING` and returns the time until its answer.
    public func ping() async throws(ClientError) -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        let answer = try await request("PING", Command.ping)
        guard case .ok(let text) = answer.reply, text == "PONG" || text.hasPrefix("PONG ") else {
            throw SubscriptionClient.unexpected(answer.reply, to: "PING")
        }
        return start.duration(to: clock.now)
    }

    // MARK: - Sending

    /// Sends `bytes` (or holds it while disconnected) and waits for the reply, within the request timeout. A `-ERR`
    /// reply is thrown as its ``ClientError`` case.
    func request(_ verb: String, _ bytes: [UInt8], capturing number: String? = nil) async throws(ClientError)
        -> LinkState.Answer
    {
        let pending = Pending<LinkState.Answer>()
        let id = state.withLock { $0.makeID() }
        let command = LinkState.Request(id: id, bytes: bytes, capturing: number, pending: pending)
        let answer = try await pending.wait(
            verb: verb, timeout: options.requestTimeout,
            timedOut: { [weak self] in _ = self?.state.withLock { $0.buffer.remove(id: id) } },
            start: { route(command) }
        ).get()
        if case .error(let code, let message) = answer.reply { throw .server(code: code, message: message) }
        return answer
    }

    /// Sends `command` on the connection, holds it, or refuses it, as the link's state says.
    func route(_ command: LinkState.Request) {
        switch state.withLock({ $0.route(command) }) {
        case .send(let connection): send(command, on: connection)
        case .held: break
        case .refused(let error): command.pending.finish(.failure(error))
        }
    }

    /// Hands `command` to `connection`; should that connection have ended before writing it, it is routed again
    /// (held for the next connection).
    func send(_ command: LinkState.Request, on connection: Connection) {
        connection.submit(
            command.bytes, capturing: command.capturing,
            unsent: { [weak self] in
                guard let self else { return command.pending.finish(.failure(.connectionLost)) }
                route(command)
            },
            { result in command.pending.finish(result.map { LinkState.Answer(reply: $0.reply, value: $0.value) }) })
    }
}
