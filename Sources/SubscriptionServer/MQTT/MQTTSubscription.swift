import SubscriptionMQTT
import SubscriptionWire

/// One topic filter an MQTT client subscribed to (a plain one, or a shared one in a group), as its session keeps it:
/// the options it asked for and the center patterns that serve it (MQTT's `a/#` matches `a` too, which subd's `a.>`
/// does not: the parent is a second pattern, subscribed while its number exists).
struct MQTTSubscription {
    /// Which filter, plain or in which group.
    var key: MQTTSubscriptionKey
    var options: MQTTSubscriptionOptions
    /// The center's pattern, and the parent's (for a filter ending in `#`).
    var patterns: MQTTFilterPatterns
    /// True while the parent pattern is subscribed in the center (an exact parent only while its number exists).
    var parentSubscribed: Bool
    /// Its subscription identifier (5.0), if the SUBSCRIBE gave one.
    var subscriptionID: Int?
    /// MQTT's rule: a filter starting with `+` or `#` does not match a topic starting with `$`.
    var excludesDollarTopics: Bool

    /// True when a publication to `number` reaches the client through this subscription.
    func matches(_ number: String) -> Bool {
        if excludesDollarTopics && number.utf8.first == UInt8(ascii: "$") { return false }
        if Names.matches(pattern: patterns.pattern, number: number) { return true }
        guard parentSubscribed, let parent = patterns.parent else { return false }
        return Names.matches(pattern: parent, number: number)
    }
}

/// A subscription's identity in its session: the filter as the client wrote it (without `$share/<group>/`) and its
/// group for a shared one.
struct MQTTSubscriptionKey: Hashable, Sendable {
    var filter: String
    var group: String?

    /// The shared subscription this is, nil for a plain one.
    var shared: MQTTSharedKey? { group.map { MQTTSharedKey(group: $0, filter: filter) } }
}
