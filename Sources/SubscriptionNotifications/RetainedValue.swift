import SubscriptionWire

extension NotificationHub {
    /// The current value of a retained number: its latest post, with the revision the hub gave it (KVO's value).
    /// ``NotificationHub/value(of:)`` returns one; each ``Change`` holds the old and the new one. The same fields as
    /// the network client's `RetainedValue`; nested in ``NotificationHub`` so the two never clash.
    ///
    /// ```swift
    /// if let price = try hub.value(of: "PRICE") {
    ///     print(price.text ?? "", "revision", price.revision)
    /// }
    /// ```
    public struct RetainedValue: Sendable, Equatable {
        /// The retained number.
        public var number: String
        /// The payload, byte for byte.
        public var payload: [UInt8]
        /// The revision of this post: 1 for the first post to the number, then one more for each.
        public var revision: Int
        /// The sender's name, when the poster gave one.
        public var from: String?
        /// The info pairs in the poster's order.
        public var infoPairs: [InfoPair]

        /// Makes a value (for tests; the hub makes the ones it returns).
        public init(number: String, payload: [UInt8], revision: Int, from: String? = nil, info: [InfoPair] = []) {
            self.number = number
            self.payload = payload
            self.revision = revision
            self.from = from
            self.infoPairs = info
        }

        /// The value a post to a retained number made; nil for a post to a plain one.
        init?(_ posting: Posting, number: String) {
            guard let revision = posting.revision else { return nil }
            self.init(
                number: number, payload: posting.payload, revision: revision, from: posting.from, info: posting.info)
        }

        /// The value a notification of a retained number carries; nil for one of a plain number.
        init?(_ notification: Notification) {
            guard let revision = notification.revision else { return nil }
            self.init(
                number: notification.number, payload: notification.payload, revision: revision,
                from: notification.from, info: notification.infoPairs)
        }

        /// The info pairs by key; should a key come twice, its first value.
        public var info: [String: String] {
            Dictionary(infoPairs.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        }

        /// The payload as text, or nil when it is not valid UTF-8.
        public var text: String? {
            String(validating: payload, as: UTF8.self)
        }
    }
}
