/// The client's live subscriptions by sid: what to send again after a reconnect and where each message goes.
struct SubscriptionTable {
    /// One subscription.
    struct Record {
        /// The subject or pattern.
        var subject: String
        /// The queue group, if any.
        var queue: String?
        /// Gets every message, on the client's queue.
        var handler: @Sendable (NATSMessage) -> Void
        /// The subscription ends once it has delivered this many messages in all; nil: never.
        var maxMessages: Int?
        /// Messages delivered so far.
        var delivered = 0
    }

    private(set) var records: [UInt64: Record] = [:]
    private var nextSid: UInt64 = 1

    /// How many subscriptions are live.
    var count: Int { records.count }

    /// Adds a subscription and returns its sid.
    mutating func add(subject: String, queue: String?, handler: @escaping @Sendable (NATSMessage) -> Void) -> UInt64 {
        let sid = nextSid
        nextSid += 1
        records[sid] = Record(subject: subject, queue: queue, handler: handler)
        return sid
    }

    /// Removes a subscription; false when there was none.
    @discardableResult
    mutating func remove(_ sid: UInt64) -> Bool { records.removeValue(forKey: sid) != nil }

    /// Sets the total number of messages after which `sid` ends. Returns the number still to deliver (0: it ended
    /// now and was removed), nil for an unknown sid.
    mutating func limit(_ sid: UInt64, to maxMessages: Int) -> Int? {
        guard var record = records[sid] else { return nil }
        let remaining = max(0, maxMessages - record.delivered)
        if remaining == 0 {
            records[sid] = nil
            return 0
        }
        record.maxMessages = maxMessages
        records[sid] = record
        return remaining
    }

    /// Counts a message for `sid` and returns the handler to call; a subscription that reached its maximum is
    /// removed. Nil for a sid that is no longer live (a message that crossed an UNSUB).
    mutating func deliver(to sid: UInt64) -> (@Sendable (NATSMessage) -> Void)? {
        guard var record = records[sid] else { return nil }
        record.delivered += 1
        if let maxMessages = record.maxMessages, record.delivered >= maxMessages {
            records[sid] = nil
        } else {
            records[sid] = record
        }
        return record.handler
    }
}
