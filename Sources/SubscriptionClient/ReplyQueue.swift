/// What to do with one reply; always called on the connection's queue.
typealias ReplyHandler = (Result<ServerReply, ClientError>) -> Void

/// The commands sent and not yet answered, oldest first. Replies are matched to them in order (FIFO), so
/// commands can be pipelined.
struct ReplyQueue {
    private var handlers: [ReplyHandler] = []
    private var head = 0

    var isEmpty: Bool { head == handlers.count }

    mutating func append(_ handler: @escaping ReplyHandler) {
        handlers.append(handler)
    }

    mutating func popFirst() -> ReplyHandler? {
        guard head < handlers.count else { return nil }
        let handler = handlers[head]
        head += 1
        if head == handlers.count {
            handlers.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 && head * 2 >= handlers.count {
            handlers.removeSubrange(0..<head)
            head = 0
        }
        return handler
    }

    /// Empties the queue, returning the handlers still waiting, oldest first.
    mutating func removeAll() -> ArraySlice<ReplyHandler> {
        let left = handlers[head...]
        handlers = []
        head = 0
        return left
    }
}
