/// The connection's side of one ``Subscription``: its patterns still in force and where its events go.
/// Owned by the connection and touched only on its queue.
final class SubscriptionSink {
    let id: Int
    /// Patterns in force; a `GONE` push removes the exact ones.
    var patterns: [Pattern]
    /// Only messages whose publisher named itself so are delivered, when set.
    let from: String?
    /// The queue group of the subscription (`SUB ... group=`): it gets only the messages the server delivered
    /// through that group.
    let group: String?
    let continuation: AsyncThrowingStream<Subscription.Event, any Error>.Continuation
    /// What its consumer has not taken yet.
    let backlog: Backlog

    init(
        id: Int,
        patterns: [Pattern],
        from: String?,
        group: String?,
        continuation: AsyncThrowingStream<Subscription.Event, any Error>.Continuation,
        backlog: Backlog
    ) {
        self.id = id
        self.patterns = patterns
        self.from = from
        self.group = group
        self.continuation = continuation
        self.backlog = backlog
    }

    /// Whether `message` belongs to this subscription. A subscription without a group gets every message its
    /// patterns match (the session receives each publication once, whichever of its subscriptions made it); one with
    /// a group gets only those that came through its group (`group=` on the `MSG`).
    func wants(_ message: ReceivedMessage) -> Bool {
        if let from, !(message.from?.utf8.elementsEqual(from.utf8) ?? false) { return false }
        if let group, !(message.group?.utf8.elementsEqual(group.utf8) ?? false) { return false }
        return patterns.contains { $0.matches(message.number) }
    }

    /// Whether an exact pattern of this subscription is `number`.
    func holdsExactly(_ number: String) -> Bool {
        patterns.contains { $0.isExactly(number) }
    }
}
