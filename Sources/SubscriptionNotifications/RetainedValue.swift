import SubscriptionWire

extension NotificationHub {
    /// The current value of a retained number: its latest post, with the revision the hub gave it (KVO's value).
    /// ``NotificationHub/value(of:)`` returns one; each ``Change`` holds the old and the new one. The one type of
    /// `SubscriptionWire`, which the network client uses too, so a value moves between them as it is.
    ///
    /// ```swift
    /// if let price = try hub.value(of: "PRICE") {
    ///     print(price.text ?? "", "revision", price.revision)
    /// }
    /// ```
    public typealias RetainedValue = SubscriptionWire.RetainedValue
}

extension SubscriptionWire.RetainedValue {
    /// The value a post to a retained number made; nil for a post to a plain one.
    init?(_ posting: Posting, number: String) {
        guard let revision = posting.revision else { return nil }
        self.init(number: number, payload: posting.payload, revision: revision, from: posting.from, info: posting.info)
    }

    /// The value a notification of a retained number carries; nil for one of a plain number.
    init?(_ notification: NotificationHub.Notification) {
        guard let revision = notification.revision else { return nil }
        self.init(
            number: notification.number, payload: notification.payload, revision: revision,
            from: notification.from, info: notification.infoPairs)
    }
}
