import DequeModule
import SubscriptionCommands
import SubscriptionProtocol

/// A session's replies that wait for something in flight, in command order: the replies to its publications whose
/// `+OK <receivers>` waits for other cluster nodes' confirmations (docs/CLUSTER.md, step 4, `ack: all`), and the
/// replies of the commands that ran behind them, which must not overtake them. A plain value; the session writes what
/// ``takeReady()`` gives into its output.
///
/// A waiting reply has a slot (``reserve()``), a number that rises by one per slot; ``fill(_:with:)`` gives it its
/// reply, in any order. A reply that is complete when it is made but comes behind a waiting one is appended ready
/// (``append(_:)``). Replies leave from the front only, and only once ready, so they leave in command order.
struct RepliesInFlight {
    /// A slot's reply: waiting, or ready to go out.
    private enum Slot {
        case waiting
        case ready(Result<Reply, ProtocolError>)
    }

    private var slots = Deque<Slot>()
    /// The number of the first slot (``reserve()`` numbers the next one `firstSlot + count`).
    private var firstSlot: UInt64 = 0
    /// Replies held, waiting or ready. Stored, so that the check every reply makes (``isEmpty``) reads one word.
    private(set) var count = 0
    /// Of those, the ones still waiting.
    private(set) var waiting = 0

    /// True when nothing waits: a reply goes straight into the output.
    var isEmpty: Bool { count == 0 }

    /// A slot at the back for a reply that comes later: its number, for ``fill(_:with:)``.
    mutating func reserve() -> UInt64 {
        let slot = firstSlot &+ UInt64(count)
        slots.append(.waiting)
        count += 1
        waiting += 1
        return slot
    }

    /// A reply complete now that must wait behind the ones in flight (only while some are: otherwise it goes out).
    mutating func append(_ reply: Result<Reply, ProtocolError>) {
        precondition(!isEmpty, "a reply appended behind nothing: it goes straight into the output")
        slots.append(.ready(reply))
        count += 1
    }

    /// Gives slot `slot` its reply. False when it is not a waiting slot of these (filled already, or taken out).
    @discardableResult
    mutating func fill(_ slot: UInt64, with reply: Result<Reply, ProtocolError>) -> Bool {
        guard slot >= firstSlot, slot - firstSlot < UInt64(count) else { return false }
        let index = Int(slot - firstSlot)
        guard case .waiting = slots[index] else { return false }
        slots[index] = .ready(reply)
        waiting -= 1
        return true
    }

    /// The front reply once it is ready (taken out), nil while the front waits or nothing is held.
    mutating func takeReady() -> Result<Reply, ProtocolError>? {
        guard case .ready(let reply)? = slots.first else { return nil }
        slots.removeFirst()
        firstSlot &+= 1
        count -= 1
        return reply
    }
}
