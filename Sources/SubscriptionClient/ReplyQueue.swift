/// What to do with one reply; always called on the connection's queue.
typealias ReplyHandler = (Result<ServerReply, ClientError>) -> Void

/// Where the `MSG` push that answers a `GET <number>` is put: the connection keeps the push of that number that comes
/// right before the GET's `+OK <rev>` (with that revision) here, instead of handing it to the subscriptions, since it
/// is an answer and not a new publication. Touched only on the connection's queue.
final class ValueCapture {
    /// The number asked for.
    let number: String
    /// The push that answered, once the reply has come.
    var message: ReceivedMessage?

    init(number: String) {
        self.number = number
    }
}

/// The commands sent and not yet answered, oldest first. Replies are matched to them in order (FIFO), so
/// commands can be pipelined.
struct ReplyQueue {
    /// One command waiting for its reply.
    struct Entry {
        /// Called with the reply.
        let handler: ReplyHandler
        /// For a `GET`: where its value push goes.
        let capture: ValueCapture?
    }

    private var entries: [Entry] = []
    private var head = 0

    var isEmpty: Bool { head == entries.count }

    /// The oldest command still waiting, without taking it.
    var first: Entry? { head < entries.count ? entries[head] : nil }

    mutating func append(_ handler: @escaping ReplyHandler, capture: ValueCapture? = nil) {
        entries.append(Entry(handler: handler, capture: capture))
    }

    mutating func popFirst() -> Entry? {
        guard head < entries.count else { return nil }
        let entry = entries[head]
        head += 1
        if head == entries.count {
            entries.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 && head * 2 >= entries.count {
            entries.removeSubrange(0..<head)
            head = 0
        }
        return entry
    }

    /// Empties the queue, returning the handlers still waiting, oldest first.
    mutating func removeAll() -> [ReplyHandler] {
        let left = entries[head...].map(\.handler)
        entries = []
        head = 0
        return left
    }
}
