import SubscriptionWire

/// Which of a message's matching subscribers a send serves
/// (``SubscriptionCenter/send(to:from:audience:groupsMet:revisedMessage:)``).
///
/// A local send serves ``everyone``. The cluster bridge serves another node's publication in two parts that
/// together are one local send (docs/CLUSTER.md, "The message path", step 3): ``plainOnly`` for the copy of its
/// plain upstream subscription, ``group(_:)`` for the copy of a queue group's queue subscription.
public enum Audience: Sendable, Equatable {
    /// Every matching subscriber outside queue groups, and one member of each matching queue group.
    case everyone
    /// The matching subscribers outside queue groups only.
    case plainOnly
    /// One member of the named queue group only, chosen as ``everyone`` would choose it: a member that a plain
    /// subscription of its own makes a receiver of the message is passed over (it has the message from the
    /// ``plainOnly`` part).
    case group(String)

    /// True when the subscribers outside groups receive the message.
    @inline(__always)
    @inlinable var servesPlainSubscribers: Bool {
        if case .group = self { return false }
        return true
    }
}
