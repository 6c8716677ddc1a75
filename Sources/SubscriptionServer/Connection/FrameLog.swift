import SubscriptionProtocol

#if canImport(Glibc)
    import Glibc
#endif

/// Where the loop copies the frames of small publications, once each, one after another: every session that gets
/// one queues a range of a block (``OutputQueue``), not a copy of its own, and a session that gets consecutive
/// frames queues one range for them all, written with one iovec.
///
/// A 1 → 10 fan-out of 128-byte messages used to copy each frame into ten sessions' buffers (memmove was the
/// largest user-space symbol of subd's profile); now it is copied once, and each subscriber's turn of messages is
/// one range. The blocks are shared by the sessions that queued ranges of them (each holds a strong reference per
/// block, ``OutputQueue``) until they are written, or copied out when the session falls behind; a block nobody
/// holds but the log is filled again from its start.
///
/// Confined to the server's queue, as its sessions are.
struct FrameLog {
    /// Bytes per block: at least 64 frames of ``OutputQueue/copyLimit`` bytes, and under glibc's mmap threshold,
    /// so a block is an ordinary heap allocation.
    static let blockSize = 64 << 10

    /// The block frames are copied into.
    private var current: FrameLogBlock?
    /// The last publication copied in (held strongly, so no other publication can have its address while it is
    /// remembered), and its identity and place: a send hands the same publication to every receiver in turn, so each
    /// but the first finds it here, by identity (no reference counting); the place is in ``current``, which holds its
    /// block. Forgotten when `current` is filled again.
    private var lastPlaced: Publication?
    private var lastPlace: (id: ObjectIdentifier, place: Place)?

    /// Where a frame was copied: its block (unretained) and its first byte.
    typealias Place = (block: Unmanaged<FrameLogBlock>, base: UnsafeMutableRawPointer)

    /// Makes an empty log; the first block is made by the first frame.
    init() {}

    /// The block and start of `publication`'s frame (at most ``blockSize`` bytes), copied in unless it was the
    /// last one copied. The block is returned unretained: the log holds it at least until the next call, and the
    /// caller takes its own reference (``OutputQueue``) before then.
    @inline(__always)
    mutating func place(_ publication: Publication) -> Place {
        if let lastPlace, lastPlace.id == ObjectIdentifier(publication) { return lastPlace.place }
        return copyIn(publication)
    }

    private mutating func copyIn(_ publication: Publication) -> Place {
        let count = publication.frameCount
        precondition(count <= Self.blockSize, "FrameLog: a frame larger than a block")
        if current == nil || current.unsafelyUnwrapped.room < count {
            // A block no session holds is filled again from its start (its bytes are all written or dropped).
            if current != nil && isKnownUniquelyReferenced(&current) {
                current.unsafelyUnwrapped.reset()
            } else {
                current = FrameLogBlock(capacity: Self.blockSize)
            }
        }
        // Through an unretained reference: `current` holds the block.
        let block = Unmanaged.passUnretained(current.unsafelyUnwrapped)
        let base = block._withUnsafeGuaranteedRef {
            $0.append(UnsafeRawBufferPointer(start: publication.frameBase, count: count))
        }
        let place = (block, base)
        lastPlaced = publication
        lastPlace = (ObjectIdentifier(publication), place)
        return place
    }

    /// Starts the next frame at the start of the block when no session holds it (called at the end of a turn, so
    /// that a steady stream keeps reusing the same, cached, bytes).
    mutating func rewindIfUnheld() {
        guard current != nil, isKnownUniquelyReferenced(&current) else { return }
        current.unsafelyUnwrapped.reset()
        lastPlaced = nil
        lastPlace = nil
    }
}

/// One block of the ``FrameLog``: frames copied in one after another, shared by the sessions that queued ranges of
/// it and freed with the last of them. Confined to the server's queue.
///
/// **Exclusivity.** Its `#if !DEBUG @exclusivity(unchecked)` properties keep the invariant stated on
/// ``EventLoop`` (release builds skip their checks; debug builds check them).
final class FrameLogBlock {
    /// The block's bytes.
    let base: UnsafeMutableRawPointer
    /// How many bytes it has.
    let capacity: Int
    /// How many are taken, from `base`.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    private(set) var used = 0

    init(capacity: Int) {
        self.capacity = capacity
        base = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { base.deallocate() }

    /// Bytes left after ``used``.
    var room: Int { capacity - used }

    /// Copies `bytes` in after what it holds; returns where they start. Invariant: `bytes.count <= room`.
    func append(_ bytes: UnsafeRawBufferPointer) -> UnsafeMutableRawPointer {
        precondition(bytes.count <= room, "FrameLogBlock: a frame larger than the room left")
        let start = base + used
        if let source = bytes.baseAddress { start.copyMemory(from: source, byteCount: bytes.count) }
        used += bytes.count
        return start
    }

    /// Forgets what it holds. Only for a block no session refers to (the log holds the only reference).
    func reset() { used = 0 }
}
