/// Bytes waiting for the socket, written from the front: frames are appended, the socket takes what it can.
struct OutboundBuffer {
    /// The storage; bytes `start...` are unsent.
    var bytes: [UInt8] = []
    /// The first unsent byte.
    private(set) var start = 0

    /// Unsent bytes.
    var count: Int { bytes.count - start }

    /// True when nothing is waiting.
    var isEmpty: Bool { start == bytes.count }

    /// `count` bytes went out.
    mutating func consume(_ count: Int) {
        start += count
        if start == bytes.count {
            bytes.removeAll(keepingCapacity: bytes.capacity <= Self.keptCapacity)
            start = 0
        } else if start >= Self.keptCapacity && start * 2 >= bytes.count {
            // Most of a large buffer is sent: move the rest to the front instead of growing forever.
            bytes.removeFirst(start)
            start = 0
        }
    }

    /// Drops everything unsent.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: bytes.capacity <= Self.keptCapacity)
        start = 0
    }

    /// A buffer emptied with more capacity than this gives the memory back.
    static let keptCapacity = 256 * 1024
}
