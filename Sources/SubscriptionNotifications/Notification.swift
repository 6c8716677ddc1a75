import SubscriptionWire

extension NotificationHub {
    /// One notification, as an observer receives it: NSNotification's name, object and `userInfo`, in the words of
    /// the wire (the same shape a subd `MSG` has).
    ///
    /// | NSNotification | here |
    /// | --- | --- |
    /// | `name` | ``number`` |
    /// | `object` | ``from`` (the sender's name) |
    /// | `userInfo` | ``info`` (``infoPairs`` in the poster's order) |
    ///
    /// plus a ``payload`` of bytes, the ``revision`` of a post to a retained number, and the queue ``group`` it came
    /// through. Nested in ``NotificationHub`` so that it never clashes with Foundation's `Notification`.
    ///
    /// ```swift
    /// for await note in try hub.observe("CART.>") {
    ///     print(note.number, note.from ?? "-", note.text ?? "", note.info["unit"] ?? "")
    /// }
    /// ```
    public struct Notification: Sendable, Equatable {
        /// The number it was posted to (with a wildcard observer, the number the pattern matched).
        public var number: String
        /// The payload, byte for byte.
        public var payload: [UInt8]
        /// The sender's name (NSNotification's `object`), when the poster gave one.
        public var from: String?
        /// The info pairs in the poster's order, values exactly as posted.
        public var infoPairs: [InfoPair]
        /// For a post to a retained number, its revision (1 for the first post, then one more for each); nil for a
        /// plain number.
        public var revision: Int?
        /// The queue group it was delivered through, when the observer joined one.
        public var group: String?

        /// Makes a notification (for tests and for forwarding; the hub makes the ones it delivers).
        public init(
            number: String, payload: [UInt8] = [], from: String? = nil, info: [InfoPair] = [], revision: Int? = nil,
            group: String? = nil
        ) {
            self.number = number
            self.payload = payload
            self.from = from
            self.infoPairs = info
            self.revision = revision
            self.group = group
        }

        init(_ posting: Posting, number: String, group: String?) {
            self.init(
                number: number, payload: posting.payload, from: posting.from, info: posting.info,
                revision: posting.revision, group: group)
        }

        /// The info pairs by key (NSNotification's `userInfo`); should a key come twice, its first value.
        public var info: [String: String] {
            Dictionary(infoPairs.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        }

        /// The payload as text, or nil when it is not valid UTF-8.
        public var text: String? {
            String(validating: payload, as: UTF8.self)
        }
    }
}
