/// The commands a ``ReconnectingClient`` was given while it had no connection, oldest first, waiting to be sent on the
/// next one: bounded in bytes, and what does not fit is refused to its caller (never dropped later, never silently).
/// A plain value; `Item` is what the client keeps with each command.
struct OutboundBuffer<Item> {
    /// The most bytes of commands held (0: none are; every command made while disconnected is refused).
    let limit: Int
    private var items: [(id: Int, bytes: Int, item: Item)] = []
    /// The bytes held now.
    private(set) var bytes = 0

    init(limit: Int) {
        self.limit = max(limit, 0)
    }

    /// How many commands wait.
    var count: Int { items.count }

    /// Adds the command `id` of `size` bytes; false (and nothing added) when it does not fit.
    mutating func append(_ item: Item, id: Int, size: Int) -> Bool {
        guard size <= limit - bytes else { return false }
        items.append((id, size, item))
        bytes += size
        return true
    }

    /// Takes the command `id` out (its caller gave up waiting); nil when it is not held (it was sent already).
    mutating func remove(id: Int) -> Item? {
        guard let index = items.firstIndex(where: { $0.id == id }) else { return nil }
        bytes -= items[index].bytes
        return items.remove(at: index).item
    }

    /// Takes every command out, oldest first.
    mutating func removeAll() -> [Item] {
        defer {
            items = []
            bytes = 0
        }
        return items.map(\.item)
    }
}
