#if canImport(Glibc)
    import Glibc
#endif

/// A session's own output bytes, first in first out, in one growable allocation: its replies, its `GONE` pushes,
/// and the small messages it had queued from the frame log when it fell behind (``OutputQueue``).
///
/// They share it, so a 6-byte `+OK 1` after each message costs 6 bytes, not a block of its own. Bytes are appended
/// at ``end`` and written out from ``start``; ``OutputQueue`` records how many of them sit between two shared
/// frames, so the bytes need no positions of their own and may move (when the buffer is compacted or grown)
/// between two writes.
///
/// Invariant: `0 <= start <= end <= capacity`, and `storage` holds `capacity` bytes (nil when 0). A pointer from
/// ``readable`` is valid until the next ``append(_:)`` or ``releaseStorage()``; ``OutputQueue`` uses one only within
/// one writev(2). Confined to the server queue, as its session is.
///
/// **Exclusivity.** Its `#if !DEBUG @exclusivity(unchecked)` properties keep the invariant stated on
/// ``EventLoop`` (release builds skip their checks; debug builds check them).
final class OutputBuffer {
    /// The first byte not yet written to the socket.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private(set) var start = 0
    /// One past the last byte queued.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private(set) var end = 0
    /// Bytes allocated.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private(set) var capacity = 0
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private var storage: UnsafeMutablePointer<UInt8>?

    /// The first allocation; doubled as needed.
    static let initialCapacity = 256

    /// Makes an empty buffer; nothing is allocated before the first append.
    init() {}

    deinit { storage?.deallocate() }

    /// Bytes queued and not yet written.
    var count: Int { end - start }

    /// Appends `bytes`, compacting or growing the storage when they do not fit after ``end``.
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if end + bytes.count > capacity { makeRoom(for: bytes.count) }
        // makeRoom leaves storage non-nil with at least bytes.count free after end.
        UnsafeMutableRawPointer(storage.unsafelyUnwrapped + end).copyMemory(from: source, byteCount: bytes.count)
        end += bytes.count
    }

    /// The first `count` unwritten bytes, for an iovec. Only valid until the next append.
    func readable(_ count: Int) -> UnsafeMutableRawPointer {
        precondition(count <= self.count && storage != nil, "OutputBuffer: reading past what was queued")
        return UnsafeMutableRawPointer(storage.unsafelyUnwrapped + start)
    }

    /// Marks `count` bytes as written; an emptied buffer starts again at offset 0. A large buffer that is now less
    /// than a quarter full is made smaller (what it holds moves once), so the memory counted for a session, which is
    /// the capacity, follows what it really queues after a burst (a 17 MiB LIST reply, say).
    func consume(_ count: Int) {
        start += count
        if start == end {
            start = 0
            end = 0
        } else if capacity > Self.shrinkAbove && (end - start) * 4 < capacity {
            resize(to: Self.capacity(toHold: end - start))
        }
    }

    /// Buffers above this size are made smaller when mostly written out.
    static let shrinkAbove = 64 << 10

    /// Takes `other`'s bytes and storage in place of its own, whose bytes are all written or were copied into
    /// `other`; `other` is left empty (``OutputQueue`` rebuilds its buffer this way when it copies ranges out of the
    /// frame log).
    func takeContents(of other: OutputBuffer) {
        storage?.deallocate()
        storage = other.storage
        start = other.start
        end = other.end
        capacity = other.capacity
        other.storage = nil
        other.start = 0
        other.end = 0
        other.capacity = 0
    }

    /// Frees the storage when nothing is queued (an idle session keeps no reply memory).
    func releaseStorage() {
        guard start == end else { return }
        storage?.deallocate()
        storage = nil
        capacity = 0
    }

    /// Makes room for `needed` more bytes after ``end``: moves the unwritten bytes to the front when they fill at most
    /// half the buffer (so a byte is moved a bounded number of times), otherwise allocates at least twice the size.
    private func makeRoom(for needed: Int) {
        let live = end - start
        if let storage, live + needed <= capacity, live * 2 <= capacity {
            // The two ranges may overlap: memmove.
            if live > 0 { memmove(storage, storage + start, live) }
            start = 0
            end = live
            return
        }
        resize(to: max(capacity * 2, Self.capacity(toHold: live + needed)))
    }

    /// The power of two (at least ``initialCapacity``) that holds `count` bytes.
    private static func capacity(toHold count: Int) -> Int {
        var capacity = initialCapacity
        while capacity < count { capacity *= 2 }
        return capacity
    }

    /// Moves the unwritten bytes to the front of a new allocation of `newCapacity` bytes.
    private func resize(to newCapacity: Int) {
        let live = end - start
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        if let storage {
            if live > 0 { moved.update(from: storage + start, count: live) }
            storage.deallocate()
        }
        storage = moved
        capacity = newCapacity
        start = 0
        end = live
    }
}
