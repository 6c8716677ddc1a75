/// A change a command made that the daemon tells on its `$SYS.` numbers (docs/PROTOCOL.md), with the client that
/// made it (``CommandEnvironment/post(_:by:)``).
public enum SystemEvent: Equatable, Sendable {
    /// `CREATE` made a number, `retained` or plain (`$SYS.number.created`).
    case numberCreated(number: String, retained: Bool)
    /// `REMOVE` removed a number and told its exact subscribers `GONE` (`$SYS.number.removed`).
    case numberRemoved(number: String, subscribersTold: Int)
}

/// Why a command ends its session (after its reply is flushed).
public enum CloseRequest: Equatable, Sendable {
    /// `QUIT`.
    case quit
    /// Too many failed `HELLO`s (``HelloCommand/maxFailures``).
    case authFailures
}

/// What a publication's fan-out gave: how many sessions of this node it was queued for, and, when other nodes'
/// receivers are to be counted too, the ticket that their count is asked with (``CommandEnvironment/reply(to:)``).
public struct Delivery: Equatable, Sendable {
    /// The receivers on this node.
    public var receivers: Int
    /// Set when the reply waits for the other nodes' receivers (a cluster's `ack: all`).
    public var confirmation: UInt64?

    /// A fan-out that reached `receivers` here.
    @inlinable
    public init(receivers: Int, confirmation: UInt64? = nil) {
        self.receivers = receivers
        self.confirmation = confirmation
    }
}
