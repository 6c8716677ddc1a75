/// Retained numbers (docs/PROTOCOL.md, Retained numbers): their current value, their changes, and
/// the numbers listed with their kinds. (``SubscriptionClient/create(_:retained:)`` creates one.)
extension SubscriptionClient {
    /// The current value of the retained number `number` (`GET`), or nil when nothing was published to it yet
    /// (revision 0).
    ///
    /// The server answers with the value as a `MSG` push and then `+OK <rev>`; that push is the answer, so no
    /// subscription of this client receives it.
    ///
    /// - Throws: ``ClientError/server(code:message:)`` with `NOTFOUND` when the number does not exist, and with
    ///   `PROTO` when it is not a retained number.
    public func get(_ number: String) async throws(ClientError) -> RetainedValue? {
        let command = try Command.get(number)
        let (reply, pushed) = try await connection.requestValue(command, of: number).get()
        return try Self.retainedValue(reply: reply, pushed: pushed, of: number)
    }

    /// The value a `GET <number>` was answered with: its `+OK <rev>` reply and the `MSG` push that came before it.
    static func retainedValue(reply: ServerReply, pushed: ReceivedMessage?, of number: String) throws(ClientError)
        -> RetainedValue?
    {
        let text = try okText(.success(reply), "GET")
        guard let revision = count(text) else {
            throw .protocolViolation("unexpected reply to GET: '+OK \(text)'")
        }
        guard revision > 0 else { return nil }
        guard let pushed, let value = RetainedValue(pushed) else {
            throw .protocolViolation("GET \(number) was answered '+OK \(revision)' without the value")
        }
        return value
    }

    /// Watches the retained number `number`: an `AsyncSequence` of its changes, each with the old value and the new
    /// one (see ``Watch``). Returns once subscribed; the current value, when there is one, is the first change.
    ///
    /// - Parameter last: The value the caller had (e.g. the `new` of the last change it saw before its connection was
    ///   lost): the first change then has it as `old`, and reports the revisions missed since (``Watch/Gap``); when
    ///   the number still has that value, nothing is reported until it changes.
    /// - Throws: ``ClientError/server(code:message:)`` with `NOTFOUND` when the number does not exist, and with
    ///   `PROTO` when it is not a retained number (the subscription is then ended again).
    public func watch(_ number: String, after last: RetainedValue? = nil) async throws(ClientError) -> Watch {
        try await watch(number, start: WatchState(after: last))
    }

    /// Watches the retained number `number` from after revision `revision`, whose value the caller does not have: the
    /// first change has no `old`, and reports the revisions missed after `revision` (``Watch/Gap``).
    public func watch(_ number: String, afterRevision revision: Int) async throws(ClientError) -> Watch {
        guard revision >= 0 else { throw .invalidArgument("a revision is never negative (got \(revision))") }
        return try await watch(number, start: WatchState(afterRevision: revision))
    }

    private func watch(_ number: String, start: WatchState) async throws(ClientError) -> Watch {
        Watch(number: number, source: .single(try await subscribeRetained(number)), start: start)
    }

    /// Subscribes to `number` (the server pushes the current value before the `+OK`), then checks with `GET` that the
    /// number is retained, so a plain number is refused at once instead of a watch that waits for revisions that never
    /// come.
    func subscribeRetained(_ number: String) async throws(ClientError) -> Subscription {
        _ = try Command.get(number)
        let subscription = try await subscribe([number])
        // On a refusal the subscription is dropped here, which ends it (UNSUB).
        _ = try await get(number)
        return subscription
    }

    /// Lists the numbers (matching `pattern`, when given) with their subscriber counts and their kinds, sorted by
    /// number (`LIST <pattern> kind`, protocol 1.1; `LIST > kind` without a pattern).
    public func listKinds(_ pattern: String? = nil) async throws(ClientError) -> [NumberListing] {
        try await listLines(try Command.list(pattern, kinds: true), "LIST").map { line throws(ClientError) in
            guard let listing = NumberListing(line: line) else {
                throw .protocolViolation("bad LIST ... kind line '\(line)'")
            }
            return listing
        }
    }

    /// A count of 1 to 18 ASCII digits, or nil.
    private static func count(_ text: String) -> Int? {
        guard (1...18).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        return Int(text)
    }
}
