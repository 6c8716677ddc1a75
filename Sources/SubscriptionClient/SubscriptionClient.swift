import Dispatch
import Glibc
import SubscriptionSystem
import SubscriptionWire

/// A connection to a subd server speaking the line protocol of docs/PROTOCOL.md, with an async/await API.
///
/// Commands may be issued from any number of tasks at once: they are written in the order they are called
/// and each gets its own reply (pipelining). Pushes go to the ``Subscription``s. Cancelling a task that waits
/// for a reply does not stop the command: it has been sent. Call ``close()`` when done; dropping the client
/// closes the socket without `QUIT`.
public final class SubscriptionClient: Sendable {
    /// Where the client is connected.
    public let endpoint: Endpoint
    /// The server's answer to `HELLO`, e.g. `subd 0.1.0 proto=1.1 session=7`.
    public let greeting: String
    let connection: Connection

    private init(endpoint: Endpoint, greeting: String, connection: Connection) {
        self.endpoint = endpoint
        self.greeting = greeting
        self.connection = connection
    }

    deinit {
        connection.closeNow()
    }

    /// Connects to `endpoint` and introduces the client with `HELLO` (with `name=` and `token=` when given).
    ///
    /// - Parameters:
    ///   - name: The client name that others can filter on (`SUB ... from=<name>`).
    ///   - token: The secret, for a server that asks for one.
    ///   - timeout: How long to wait for each TCP address to accept the connection, for the TLS handshake, and for
    ///     the answer to `HELLO` (``ClientError/timeout(verb:after:)`` past it).
    ///   - tls: Speak TLS (a `tls://` listener of subd), trusting and presenting what it says; nil for plain.
    /// - Throws: ``ClientError/connectFailed(endpoint:reason:)`` when the connection cannot be made;
    ///   ``ClientError/server(code:message:)`` when `HELLO` is refused (e.g. `AUTH`).
    public static func connect(
        to endpoint: Endpoint,
        name: String? = nil,
        token: String? = nil,
        timeout: Duration = .seconds(10),
        tls: TLSOptions? = nil
    ) async throws(ClientError) -> SubscriptionClient {
        ignoreSIGPIPE
        let hello = try Command.hello(name: name, token: token)
        let opened: Result<(Int32, ClientTLS?), ClientError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    returning: Result { () throws(ClientError) in
                        let fd = try SocketConnector.connect(to: endpoint, timeout: timeout)
                        guard let tls else { return (fd, nil) }
                        guard case .tcp(let host, _) = endpoint else {
                            Syscall.close(fd)
                            throw ClientError.invalidArgument("TLS needs a TCP server address, not \(endpoint)")
                        }
                        do throws(ClientError) {
                            let session = try ClientTLS.handshake(
                                fd: fd, host: host, endpoint: endpoint.description, options: tls, timeout: timeout)
                            return (fd, session)
                        } catch {
                            Syscall.close(fd)
                            throw error
                        }
                    })
            }
        }
        let (fd, session) = try opened.get()
        return try await handshake(socket: fd, endpoint: endpoint, hello: hello, tls: session, timeout: timeout)
    }

    /// Takes over the connected non-blocking socket `fd` and sends `hello`. Tests use it with a socket pair.
    /// With `timeout`, a `HELLO` not answered in time ends the connection with ``ClientError/timeout(verb:after:)``.
    static func handshake(
        socket fd: Int32, endpoint: Endpoint, hello: [UInt8], tls: ClientTLS? = nil, timeout: Duration? = nil
    ) async throws(ClientError) -> SubscriptionClient {
        let connection = Connection(fd: fd, endpoint: endpoint.description, tls: tls)
        let timer = timeout.map { timeout in
            let timer = DispatchWorkItem { connection.abort(.timeout(verb: "HELLO", after: timeout)) }
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.interval(timeout), execute: timer)
            return timer
        }
        let answer = await connection.request(hello)
        timer?.cancel()
        switch answer {
        case .success(.ok(let text)) where text == "OK" || text.hasPrefix("OK "):
            let greeting = String(text.dropFirst(2).drop { $0 == " " })
            return SubscriptionClient(endpoint: endpoint, greeting: greeting, connection: connection)
        case .success(let other):
            connection.closeNow()
            throw Self.unexpected(other, to: "HELLO")
        case .failure(let error):
            connection.closeNow()
            throw error
        }
    }

    /// Creates `number`, a retained one when `retained` is true (`CREATE <number> retain`, protocol 1.1: it keeps its
    /// latest publication; see ``get(_:)`` and ``watch(_:after:)``). Returns true when it was created, false when it
    /// existed already (it then keeps the kind it has).
    public func create(_ number: String, retained: Bool = false) async throws(ClientError) -> Bool {
        try Self.created(try await okText(try Command.create(number, retained: retained), "CREATE"))
    }

    /// Whether the text of `CREATE`'s `+OK` says the number was created (`created`) or existed (`exists`).
    static func created(_ text: String) throws(ClientError) -> Bool {
        switch text {
        case "created": return true
        case "exists": return false
        default: throw .protocolViolation("unexpected reply to CREATE: '+OK \(text)'")
        }
    }

    /// Removes `number`. Returns how many subscribers were told `GONE`.
    ///
    /// - Throws: ``ClientError/server(code:message:)`` with `NOTFOUND` when there is no such number.
    public func remove(_ number: String) async throws(ClientError) -> Int {
        try Self.removed(try await okText(try Command.remove(number), "REMOVE"))
    }

    /// The subscriber count in the text of `REMOVE`'s `+OK` (`removed <k>`).
    static func removed(_ text: String) throws(ClientError) -> Int {
        guard text.hasPrefix("removed "), let count = Int(text.dropFirst("removed ".count)), count >= 0 else {
            throw .protocolViolation("unexpected reply to REMOVE: '+OK \(text)'")
        }
        return count
    }

    /// Publishes `payload` (any bytes) to `number` with `PUB`, with the info pairs `info` (protocol 1.1; every
    /// receiver gets them on its `MSG`). Returns the number of receivers.
    ///
    /// Values are sent as they are: percent-encode one that needs a space, `=` or a control character
    /// (``InfoPair/percentEncoded(_:)``).
    ///
    /// - Throws: ``ClientError/invalidInfo(_:)`` when `info` breaks the info-pair rules (nothing is sent);
    ///   ``ClientError/server(code:message:)`` with `NOTFOUND` when the number does not exist.
    public func publish(_ number: String, _ payload: [UInt8], info: [InfoPair] = []) async throws(ClientError) -> Int {
        try Self.receivers(try await okText(try Command.pub(number, payload, info: info), "PUB"))
    }

    /// Publishes the UTF-8 bytes of `text` to `number`, with the info pairs `info`. Returns the number of receivers.
    public func publish(_ number: String, text: String, info: [InfoPair] = []) async throws(ClientError) -> Int {
        try await publish(number, Array(text.utf8), info: info)
    }

    /// Publishes every payload to `number`, in order, each with the info pairs `info`, written back to back without
    /// waiting for each reply. Returns the receivers of each message; throws the first refusal (the other messages
    /// were still sent).
    public func publish(_ number: String, batch payloads: [[UInt8]], info: [InfoPair] = []) async throws(ClientError)
        -> [Int]
    {
        var commands: [[UInt8]] = []
        commands.reserveCapacity(payloads.count)
        for payload in payloads { commands.append(try Command.pub(number, payload, info: info)) }
        var receivers: [Int] = []
        receivers.reserveCapacity(payloads.count)
        for result in await connection.requests(commands) {
            receivers.append(try Self.receivers(try Self.okText(result, "PUB")))
        }
        return receivers
    }

    /// Subscribes to `patterns` (numbers or wildcard patterns), each with `SUB`, optionally limited to
    /// messages from the publisher named `from`, and optionally as a member of the queue group `group` (protocol 1.1:
    /// of the sessions subscribed with one group name, one receives each publication, in turn). Returns when every
    /// `SUB` got `+OK`; messages pushed after a `SUB` are never lost, nor the current values of retained numbers
    /// that the server pushes before its `+OK`.
    ///
    /// Messages are routed to the subscriptions of this client whose patterns match them (two overlapping
    /// subscriptions both receive a message; the server sends it once). A subscription with a group gets only the
    /// messages that came through that group (`group=` on the `MSG`, ``ReceivedMessage/group``). One pattern has one
    /// `from` filter and one group per connection.
    ///
    /// - Throws: ``ClientError/invalidGroupName(_:_:)`` when `group` breaks the client-name rule (nothing is sent);
    ///   the first refusal, e.g. ``ClientError/server(code:message:)`` with `NOTFOUND` for an exact number that does
    ///   not exist; the patterns that were subscribed are then unsubscribed again.
    public func subscribe(_ patterns: [String], from: String? = nil, group: String? = nil) async throws(ClientError)
        -> Subscription
    {
        var unique: [String] = []
        for pattern in patterns where !unique.contains(where: { $0.utf8.elementsEqual(pattern.utf8) }) {
            unique.append(pattern)
        }
        guard !unique.isEmpty else { throw .invalidArgument("subscribe needs at least one pattern") }
        var commands: [[UInt8]] = []
        for pattern in unique { commands.append(try Command.sub(pattern, from: from, group: group)) }
        let (events, continuation) = AsyncThrowingStream.makeStream(of: Subscription.Event.self)
        let connection = self.connection
        let backlog = Backlog()
        let subscribed = await connection.subscribe(
            unique.map(Pattern.init),
            commands: commands,
            from: from,
            group: group,
            continuation: continuation,
            backlog: backlog
        )
        let id = try subscribed.get()
        continuation.onTermination = { _ in connection.subscriptionEnded(id) }
        return Subscription(
            patterns: unique, from: from, group: group, events: events, client: self,
            flow: Subscription.Flow(backlog: backlog, connection: connection))
    }

    /// Lists the numbers (matching `pattern`, when given) with their subscriber counts, sorted by number.
    public func list(_ pattern: String? = nil) async throws(ClientError) -> [(number: String, subscribers: Int)] {
        try await listLines(try Command.list(pattern), "LIST").map { line throws(ClientError) in
            guard let space = line.firstIndex(of: " "), let count = Int(line[line.index(after: space)...]) else {
                throw .protocolViolation("bad LIST line '\(line)'")
            }
            return (number: String(line[..<space]), subscribers: count)
        }
    }

    /// The server's statistics, as key and value, in the order the server sent them.
    public func stats() async throws(ClientError) -> [(key: String, value: String)] {
        try await listLines(Command.stats, "STATS").map { line in
            guard let space = line.firstIndex(of: " ") else { return (key: line, value: "") }
            return (key: String(line[..<space]), value: String(line[line.index(after: space)...]))
        }
    }

    /// Sends `PING` and returns the round-trip time.
    public func ping() async throws(ClientError) -> Duration {
        let clock = ContinuousClock()
        let start = clock.now
        let reply = try Self.value(await connection.request(Command.ping), "PING")
        let elapsed = start.duration(to: clock.now)
        guard case .ok(let text) = reply, text == "PONG" || text.hasPrefix("PONG ") else {
            throw Self.unexpected(reply, to: "PING")
        }
        return elapsed
    }

    /// Sends `QUIT`, waits for the server to answer, and closes the connection. Subscriptions end without an
    /// error; later commands fail with ``ClientError/connectionLost``. Calling it again does nothing.
    public func close() async {
        await connection.quit()
    }

    /// A duration as a Dispatch interval (negative as zero).
    static func interval(_ duration: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(Int(clamping: max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000))
    }

    // MARK: - Replies

    /// Sends `command` and returns the text after `+OK ` (empty for a bare `+OK`).
    func okText(_ command: [UInt8], _ verb: String) async throws(ClientError) -> String {
        try Self.okText(await connection.request(command), verb)
    }

    static func okText(_ result: Result<ServerReply, ClientError>, _ verb: String) throws(ClientError)
        -> String
    {
        let reply = try value(result, verb)
        guard case .ok(let text) = reply, text == "OK" || text.hasPrefix("OK ") else {
            throw unexpected(reply, to: verb)
        }
        return String(text.dropFirst(3))
    }

    func listLines(_ command: [UInt8], _ verb: String) async throws(ClientError) -> [String] {
        let reply = try Self.value(await connection.request(command), verb)
        guard case .list(let lines) = reply else { throw Self.unexpected(reply, to: verb) }
        return lines
    }

    /// The reply, with `-ERR` turned into ``ClientError/server(code:message:)``.
    static func value(_ result: Result<ServerReply, ClientError>, _ verb: String) throws(ClientError)
        -> ServerReply
    {
        let reply = try result.get()
        if case .error(let code, let message) = reply { throw .server(code: code, message: message) }
        return reply
    }

    static func receivers(_ text: String) throws(ClientError) -> Int {
        guard let count = Int(text), count >= 0 else {
            throw .protocolViolation("unexpected reply to PUB: '+OK \(text)'")
        }
        return count
    }

    static func unexpected(_ reply: ServerReply, to verb: String) -> ClientError {
        switch reply {
        case .error(let code, let message): return .server(code: code, message: message)
        case .ok(let text): return .protocolViolation("unexpected reply to \(verb): '+\(text)'")
        case .list(let lines): return .protocolViolation("unexpected list of \(lines.count) lines in reply to \(verb)")
        }
    }
}

/// Writing to a socket whose peer has gone must give EPIPE, not kill the process. Sends use MSG_NOSIGNAL too;
/// this covers every other write of the process. Evaluated once.
private let ignoreSIGPIPE: Void = {
    _ = signal(SIGPIPE, SIG_IGN)
}()
