import SubscriptionCenter
import SubscriptionWire

extension NotificationHub {
    /// Posts a notification to the number `number`, and returns how many observers got it.
    ///
    /// Every observer whose pattern matches the number and whose `from` filter passes (it names this very `sender`)
    /// gets it once, however many of its patterns match; of a queue group, one member in turn. An observer "got" it
    /// when it was handed over: put in its stream's buffer (not when the buffer was full), on its queue, or in its
    /// handler's mailbox. To a retained number, the post becomes its value, with the next revision, observers or
    /// not. The handlers of observers with no queue have run when `post` returns, unless another thread was running
    /// the same observer at that moment (it then runs this one next, in order).
    ///
    /// ```swift
    /// let info = [InfoPair(key: "price", value: "3")]
    /// try hub.post("CART.changes", from: "apple", info: info, payload: Array("plus".utf8))   // 1
    /// ```
    ///
    /// - Parameters:
    ///   - number: An existing number (no wildcard).
    ///   - sender: Who posts (NSNotification's `object`): a client name, which observers may filter on (`from:`).
    ///   - info: The info pairs (NSNotification's `userInfo`), under the wire's rules (at most 16, keys of letters,
    ///     digits, `_`, `-` and `.`, values with no space or `=`: see `InfoPair.percentEncoded(_:)`).
    ///   - payload: Any bytes.
    /// - Throws: ``HubError/invalidName(_:_:)``, ``HubError/notFound(_:)``, ``HubError/invalidSender(_:_:)``,
    ///   ``HubError/invalidInfo(_:)``; nothing is delivered then.
    @discardableResult
    public func post(
        _ number: String, from sender: String? = nil, info: [InfoPair] = [], payload: [UInt8] = []
    ) throws(HubError) -> Int {
        try HubRules.checkNumber(number)
        try HubRules.checkSender(sender)
        try HubRules.checkInfo(info)
        return try locked { state throws(HubError) in
            do throws(CenterError) {
                return try state.center.send(
                    to: number, from: sender,
                    revisedMessage: { revision in
                        Posting(from: sender, info: info, payload: payload, revision: revision.map { Int($0) })
                    })
            } catch {
                throw HubError(error)
            }
        }
    }

    /// Posts the UTF-8 bytes of `text` to the number `number`, as ``post(_:from:info:payload:)`` does, and returns
    /// how many observers got it.
    ///
    /// ```swift
    /// try hub.post("CART.changes", from: "apple", text: "plus")
    /// ```
    @discardableResult
    public func post(
        _ number: String, from sender: String? = nil, info: [InfoPair] = [], text: String
    ) throws(HubError) -> Int {
        try post(number, from: sender, info: info, payload: Array(text.utf8))
    }
}
