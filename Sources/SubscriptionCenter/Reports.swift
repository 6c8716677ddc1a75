import SubscriptionWire

/// One subscription of a customer, as reported by ``SubscriptionCenter/subscriptions(of:)``.
public struct SubscriptionInfo: Equatable, Sendable {
    /// The number or wildcard pattern subscribed to.
    public var pattern: String
    /// The sender filter: only messages sent with this sender are delivered; nil means any sender.
    public var from: String?
    /// The queue group it belongs to, if any.
    public var group: String?

    /// Makes a report line.
    @inlinable public init(pattern: String, from: String? = nil, group: String? = nil) {
        self.pattern = pattern
        self.from = from
        self.group = group
    }
}

/// One existing number, as reported by ``SubscriptionCenter/list(matching:)``.
public struct NumberInfo: Equatable, Sendable {
    /// The number's name.
    public var number: String
    /// How many live customers a message to it would reach (exact and wildcard, deduplicated).
    public var subscribers: Int
    /// For a retained number, its current revision (0 before the first message); nil for a plain number.
    public var retainedRevision: UInt64?

    /// Makes a report line.
    @inlinable public init(number: String, subscribers: Int, retainedRevision: UInt64? = nil) {
        self.number = number
        self.subscribers = subscribers
        self.retainedRevision = retainedRevision
    }
}
