import SubscriptionWire

/// The current value of a retained number: ``SubscriptionClient/get(_:)`` returns one, and each ``Watch/Change``
/// holds the old and the new one. The one type of `SubscriptionWire`, which the in-process `NotificationHub` uses too.
public typealias RetainedValue = SubscriptionWire.RetainedValue

extension RetainedValue {
    /// The value a `MSG` push carries, or nil when it has no `rev=` (it was published to a plain number).
    public init?(_ message: ReceivedMessage) {
        guard let revision = message.revision else { return nil }
        self.init(
            number: message.number, payload: message.payload, revision: revision, from: message.from,
            info: message.infoPairs)
    }
}
