import SubscriptionWire

/// One post as the hub's center carries it, and as a retained number keeps it as its value: the sender, the info
/// pairs, the payload and, for a retained number, the revision the center gave it. Each observer's
/// ``NotificationHub/Notification`` is made from it; its arrays are shared, not copied.
struct Posting: Sendable {
    let from: String?
    let info: [InfoPair]
    let payload: [UInt8]
    /// 1, 2, ... for a post to a retained number; nil for a plain one.
    let revision: Int?
}
