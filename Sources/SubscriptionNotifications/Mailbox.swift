/// What one observer has been handed and not taken yet, behind its registration's own lock. The hub fills it under
/// the hub's lock, in post order; the observer's side empties it with no hub lock held: a stream's reader, or the
/// one thread that runs a handler (a posting thread, or the handler's queue).
struct Mailbox: Sendable {
    /// One thing an observer is handed.
    enum Item: Sendable {
        /// A post.
        case notification(NotificationHub.Notification)
        /// The exact number observed was removed: the observer's last item.
        case removed(String)
        /// The hub was deallocated: the observer's last item.
        case hubEnded

        /// True for the items after which nothing more comes.
        var isLast: Bool {
            if case .notification = self { return false }
            return true
        }
    }

    /// Waiting, in post order.
    var items = ItemQueue()
    /// A stream's reader waiting for the next item (only when ``items`` is empty).
    var reader: CheckedContinuation<Item?, Never>?
    /// True while a thread runs a handler's items (it takes what comes in meanwhile, in order).
    var draining = false
    /// True once the last item was taken: a stream's reader gets nil from then on.
    var finished = false
    /// True once the observer ended: nothing more is taken, and nothing more is started.
    var cancelled = false
}

/// A first-in, first-out queue of mailbox items that takes from the front without moving the rest.
struct ItemQueue: Sendable {
    private var storage: [Mailbox.Item] = []
    private var head = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }

    mutating func append(_ item: Mailbox.Item) {
        storage.append(item)
    }

    mutating func popFirst() -> Mailbox.Item? {
        guard head < storage.count else { return nil }
        let item = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return item
    }

    mutating func removeAll() {
        storage = []
        head = 0
    }
}
