import SubscriptionProtocol
import SubscriptionSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The ordered output of one connection: publications' `MSG` frames and the session's own bytes, written with
/// writev(2) at the end of each turn, or between two reads of a turn when much is queued (``EventLoop``; swift-nio
/// `PendingWritesManager`).
///
/// Replies and pushes keep the order in which they were queued, so a reply (a list included) is never split by a
/// push. The session's own bytes go to its one ``OutputBuffer``; the queue records only how many of them come
/// between two frames. A message frame of at most ``copyLimit`` bytes, to a session that keeps up, is queued as a
/// range of the loop's ``FrameLog``, where it was copied once for every receiver; consecutive frames make one range,
/// one iovec. Larger frames, and every frame to a session that is behind (its last write was short) or whose output
/// is held, are shared by reference to the publication, so a backlog of N messages to S subscribers costs N frames,
/// not N × S copies. A session that falls behind copies its unwritten ranges into its own buffer and lets go of the
/// log's blocks (``detachRanges()``): only sessions that keep up hold blocks, until their next write. Buffers are
/// reused from turn to turn, so a steady stream costs no allocation here; the session's housekeeping frees them once
/// it is idle.
///
/// Memory is counted as it is held (``heldBytes``): each shared frame's whole allocation, the bytes of each range
/// (the blocks are shared by every receiver that keeps up, and reused), the reply buffer and the chunk list, so a
/// client that pipelines small commands around large pushes is paused by what it really costs.
struct OutputQueue {
    /// One entry of the output, in order: a publication's frame, a range of the frame log, or a run of the session's
    /// own bytes. Plain data, so the list is
    /// copied and cleared without reference counting. The output queues together own one retain of each publication
    /// in any of them, counted per entry in ``Publication/queueReferences`` (``pin(_:)``, ``unpin(_:)``): a plain
    /// increment per delivery where an atomic retain and release cost about 15% of a 1 → 500 fan-out.
    struct Chunk {
        /// The publication whose frame this is (pinned by ``pin(_:)``), or nil.
        var publication: Unmanaged<Publication>?
        /// Where a range of a ``FrameLog`` block starts (the block held in ``blocks``), or nil.
        var logBase: UnsafeMutableRawPointer?
        /// Its bytes: the whole frame, the range, or this many bytes of the output buffer, next in its order.
        var count: Int

        /// The publication's ``Publication/heldBytes``; 0 for a range or own bytes (counted by their bytes, or with
        /// the output buffer).
        var held: Int {
            publication?._withUnsafeGuaranteedRef { $0.heldBytes } ?? 0
        }

        /// True for the session's own bytes.
        var isOwnBytes: Bool { publication == nil && logBase == nil }
    }

    /// Message frames up to this many bytes go through the frame log; larger ones are shared by reference.
    static let copyLimit = 1024

    private var chunks: [Chunk] = []
    private var head = 0
    private var headOffset = 0
    private let ownBytes = OutputBuffer()
    /// The ``Publication/heldBytes`` of every publication still queued.
    private var framesHeld = 0
    /// The log blocks this queue has ranges of, oldest first, with how many of its chunks lie in each: ranges are
    /// queued and written in order, so the first entry is the block of the first range. One strong reference per
    /// block, taken by the first range and given back with the last (or by ``detachRanges()``).
    private var blocks: [(block: FrameLogBlock, chunks: Int)] = []
    /// The unwritten bytes of the ranges.
    private var rangesHeld = 0
    /// The last block in ``blocks`` (unretained: `blocks` holds it), nil when there is none.
    private var lastBlock: Unmanaged<FrameLogBlock>?
    /// Where the last chunk ends when it is a range of a log block (the next frame placed there extends it), else
    /// nil.
    private var lastRangeEnd: UnsafeMutableRawPointer?
    /// True when the last write left bytes unwritten (the socket's buffer was full) and they are not all out yet.
    private(set) var isBehind = false

    /// Bytes queued and not yet written.
    private(set) var pendingBytes = 0

    /// True when nothing is waiting.
    var isEmpty: Bool { pendingBytes == 0 }

    /// Entries not yet written (frames, ranges of the log and runs of own bytes): what one writev would need.
    var queuedChunks: Int { chunks.count - head }

    /// The memory held by what is queued: shared frames, ranges, the reply buffer and the chunk list (0 when nothing
    /// is queued).
    var heldBytes: Int {
        guard pendingBytes > 0 else { return 0 }
        return framesHeld + rangesHeld + ownBytes.capacity + chunks.capacity * MemoryLayout<Chunk>.stride
    }

    /// Queues a publication's frame: a small one to a session that keeps up as a range of `log` (the range before it
    /// grows when the frame follows it there), any other, or any while `sharing` (the session's output is held), by
    /// reference.
    mutating func append(_ publication: Publication, log: inout FrameLog, sharing: Bool = false) {
        let count = publication.frameCount
        guard count <= Self.copyLimit && !isBehind && !sharing else {
            lastRangeEnd = nil
            chunks.append(Chunk(publication: Self.pin(publication), logBase: nil, count: count))
            pendingBytes += count
            framesHeld += publication.heldBytes
            return
        }
        let (block, base) = log.place(publication)
        pendingBytes += count
        rangesHeld += count
        let sameBlock = lastBlock?.toOpaque() == block.toOpaque()
        defer { lastRangeEnd = base + count }
        if sameBlock && lastRangeEnd == base {
            // Right after the last range, in the same block.
            chunks[chunks.count - 1].count += count
            return
        }
        chunks.append(Chunk(publication: nil, logBase: base, count: count))
        if sameBlock {
            blocks[blocks.count - 1].chunks += 1
        } else {
            // Invariant: the log holds `block` until its next `place`; the reference taken here is the queue's.
            blocks.append((block.takeUnretainedValue(), 1))
            lastBlock = block
        }
    }

    /// Counts one more queue entry for `publication`; the first one takes the queues' strong reference. Invariant
    /// (``Publication/queueReferences``): called on the server's queue only, like every output queue's mutation.
    static func pin(_ publication: Publication) -> Unmanaged<Publication> {
        let references = publication.queueReferences
        publication.queueReferences = references + 1
        return references == 0 ? .passRetained(publication) : .passUnretained(publication)
    }

    /// Counts one queue entry less; the last one gives the queues' strong reference back (the publication may be
    /// freed here).
    static func unpin(_ publication: Unmanaged<Publication>) {
        let left = publication._withUnsafeGuaranteedRef { publication in
            publication.queueReferences -= 1
            return publication.queueReferences
        }
        if left == 0 { publication.release() }
    }

    /// Copies bytes (a reply, a push, a small message) to the output buffer; consecutive ones make one chunk.
    mutating func append(replyBytes bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        ownBytes.append(bytes)
        pendingBytes += bytes.count
        lastRangeEnd = nil
        if head < chunks.count && chunks[chunks.count - 1].isOwnBytes {
            chunks[chunks.count - 1].count += bytes.count
        } else {
            chunks.append(Chunk(publication: nil, logBase: nil, count: bytes.count))
        }
    }

    /// Drops everything queued and frees the buffers (the connection is going away).
    mutating func removeAll() {
        for index in head..<chunks.count {
            if let publication = chunks[index].publication { Self.unpin(publication) }
        }
        chunks = []
        head = 0
        headOffset = 0
        ownBytes.consume(ownBytes.count)
        ownBytes.releaseStorage()
        framesHeld = 0
        blocks = []
        rangesHeld = 0
        lastBlock = nil
        lastRangeEnd = nil
        pendingBytes = 0
    }

    /// Frees the chunk list and the reply buffer when nothing is queued, so an idle session holds no output
    /// memory (they are made again by the next message or reply).
    mutating func releaseIdleMemory() {
        guard pendingBytes == 0 else { return }
        chunks = []
        blocks = []
        head = 0
        headOffset = 0
        ownBytes.releaseStorage()
    }

    // MARK: Writing: the state only (the system calls are OutputWriter's)

    /// The iovecs of the next writev(2): up to `maxVectors`, large chunks from where they lie, and runs of small ones
    /// (each under ``gatherChunkLimit``: shared frames of small messages, replies between them) copied together into
    /// `scratch`, one iovec per run, while it has room. Returns the iovecs used and their bytes (0 and 0 when nothing
    /// is queued). The kernel copies many small iovecs more slowly than one block plus our copy: a 1 → 500 fan-out of
    /// 128 B messages, shared frame by frame, spent about 30% less kernel time with the runs gathered
    /// (`/proc/PID/stat`, the same bytes written). Tell the queue what the write did: ``wrote(_:of:)`` or
    /// ``socketFull()``. Invariant: every iovec points into a queued frame (kept alive by its pin), a log block (kept
    /// alive by ``blocks``), the output buffer's unwritten bytes, or `scratch`, all valid until the write returns.
    func nextVectors(
        _ vectors: UnsafeMutablePointer<iovec>, maxVectors: Int, scratch: UnsafeMutableRawBufferPointer
    )
        -> (count: Int, bytes: Int)
    {
        var n = 0
        var offered = 0
        var index = head
        var offset = headOffset
        // Reply chunks follow each other in the reply buffer, from its first unwritten byte on.
        var replyOffset = 0
        var gathered = 0
        var isGathering = false
        while index < chunks.count && n < maxVectors {
            let chunk = chunks[index]
            let length = chunk.count - offset
            let source: UnsafeMutableRawPointer
            if let publication = chunk.publication {
                source = UnsafeMutableRawPointer(publication._withUnsafeGuaranteedRef { $0.frameBase } + offset)
            } else if let logBase = chunk.logBase {
                source = logBase + offset
            } else {
                source = ownBytes.readable(replyOffset + length) + replyOffset
                replyOffset += length
            }
            let isSmall = length < Self.gatherChunkLimit && gathered + length <= scratch.count
            // A run is two chunks at least: a lone small chunk is written from where it lies, not copied.
            let startsRun =
                isSmall && !isGathering && n + 1 < maxVectors && index + 1 < chunks.count
                && chunks[index + 1].count < Self.gatherChunkLimit
                && gathered + length + chunks[index + 1].count <= scratch.count
            if isSmall && (isGathering || startsRun) {
                let target = scratch.baseAddress! + gathered
                target.copyMemory(from: source, byteCount: length)
                if isGathering {
                    vectors[n - 1].iov_len += length
                } else {
                    vectors[n] = iovec(iov_base: target, iov_len: length)
                    n += 1
                    isGathering = true
                }
                gathered += length
            } else {
                vectors[n] = iovec(iov_base: source, iov_len: length)
                n += 1
                isGathering = false
            }
            offered += length
            index += 1
            offset = 0
        }
        return (n, offered)
    }

    /// Chunks under this many bytes are gathered into one block for writing (a plain socket's run of small chunks,
    /// and TLS, whose `SSL_write` has no writev); larger ones are written from where they lie.
    static let gatherChunkLimit = 4096

    /// The run of small chunks at the head (each under ``gatherChunkLimit``, the first counted from `headOffset`), up
    /// to `limit` bytes: its bytes and how many chunks it spans (0 and 0 when the head chunk is large).
    private func smallRun(limit: Int) -> (bytes: Int, chunks: Int) {
        var total = 0
        var count = 0
        var index = head
        var offset = headOffset
        while index < chunks.count {
            let length = chunks[index].count - offset
            guard length < Self.gatherChunkLimit, total + length <= limit else { break }
            total += length
            count += 1
            index += 1
            offset = 0
        }
        return (total, count)
    }

    /// Advances past `written` bytes, releasing fully written chunks.
    private mutating func consume(_ written: Int) {
        var left = written
        pendingBytes -= written
        while left > 0 {
            let chunk = chunks[head]
            let remaining = chunk.count - headOffset
            let taken = min(left, remaining)
            if chunk.isOwnBytes {
                ownBytes.consume(taken)
            } else if chunk.logBase != nil {
                rangesHeld -= taken
            }
            left -= taken
            if taken < remaining {
                headOffset += taken
            } else {
                if let publication = chunk.publication {
                    framesHeld -= chunk.held
                    Self.unpin(publication)
                } else if chunk.logBase != nil {
                    releaseFirstRange()
                }
                head += 1
                headOffset = 0
            }
        }
        if head == chunks.count {
            isBehind = false
            lastRangeEnd = nil
            // Capacity is kept for the next turn (freeing and growing again each turn costs page faults); an idle
            // session gives it back in ``releaseIdleMemory()``.
            chunks.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 && head * 2 >= chunks.count {
            chunks.removeFirst(head)
            head = 0
        }
    }

    /// The first range still queued was written: its block's count goes down, and the block is given back with
    /// its last range.
    private mutating func releaseFirstRange() {
        blocks[0].chunks -= 1
        guard blocks[0].chunks == 0 else { return }
        blocks.removeFirst()
        if blocks.isEmpty { lastBlock = nil }
    }

    /// `written` of the `offered` bytes of the last ``nextVectors(_:maxVectors:scratch:)`` or
    /// ``nextBlock(repeating:scratch:)`` went out: they are released. Fewer than offered means the socket is full:
    /// the queue is behind until it is all out (later frames are shared, not copied to the log).
    mutating func wrote(_ written: Int, of offered: Int) {
        consume(written)
        if written < offered { socketFull() }
    }

    /// The socket took less than offered, or nothing (EAGAIN): the session is behind until everything is out (its
    /// next frames are shared), and its ranges are copied out of the log (``detachRanges()``).
    mutating func socketFull() {
        isBehind = true
        detachRanges()
    }

    /// Copies the unwritten bytes of every range into the session's own buffer, in their order among its own bytes,
    /// and gives the log's blocks back: a subscriber that stalls holds the bytes it has pending, counted in its
    /// buffer, not blocks of 64 KiB that the log cannot fill again. Each range becomes own bytes with the same count
    /// (the first chunk's written part, `headOffset`, is not copied, as for own bytes).
    private mutating func detachRanges() {
        guard !blocks.isEmpty else { return }
        let rebuilt = OutputBuffer()
        var ownOffset = 0
        for index in head..<chunks.count {
            let chunk = chunks[index]
            let length = chunk.count - (index == head ? headOffset : 0)
            if let logBase = chunk.logBase {
                rebuilt.append(UnsafeRawBufferPointer(start: logBase + (chunk.count - length), count: length))
                chunks[index].logBase = nil
            } else if chunk.publication == nil {
                rebuilt.append(
                    UnsafeRawBufferPointer(start: ownBytes.readable(ownOffset + length) + ownOffset, count: length))
                ownOffset += length
            }
        }
        assert(ownOffset == ownBytes.count, "OutputQueue: own bytes not all in chunks")
        ownBytes.takeContents(of: rebuilt)
        blocks.removeAll(keepingCapacity: true)
        rangesHeld = 0
        lastBlock = nil
        lastRangeEnd = nil
    }
}

// MARK: Writing through TLS

extension OutputQueue {
    /// At most this many gathered bytes per `SSL_write`: one TLS record. The scratch buffer holds this much.
    static let tlsGatherLimit = 16_384
    /// At most this many bytes of one large chunk per `SSL_write`.
    static let tlsDirectLimit = 65_536

    /// The bytes of the next `SSL_write`: `length` bytes when OpenSSL asks for a write to be repeated as it was, else
    /// a large first chunk alone (up to ``tlsDirectLimit``) or the small chunks in a row (up to ``tlsGatherLimit``),
    /// from where they lie when one chunk holds them, else copied together into `scratch`; never more than `limit`
    /// bytes (the rest of a WebSocket frame). Empty when nothing is queued. Tell the queue what the write did:
    /// ``wrote(_:of:)`` or ``socketFull()``.
    func nextBlock(
        repeating length: Int?, limit: Int = .max, scratch: UnsafeMutableRawBufferPointer
    ) -> UnsafeRawBufferPointer {
        guard head < chunks.count else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        let count = min(length ?? nextTLSBlockLength(), pendingBytes, limit)
        let run = headRun()
        if run.count >= count { return UnsafeRawBufferPointer(rebasing: run[..<count]) }
        copyPending(count, into: scratch)
        return UnsafeRawBufferPointer(rebasing: scratch[..<count])
    }

    /// The unwritten bytes of the first chunk, where they lie. Invariant: `head < chunks.count`; a publication's
    /// frame stays alive while its chunk is queued (the queue holds a retain), a range's block while it is in
    /// ``blocks``, and the reply buffer's bytes until they are consumed.
    private func headRun() -> UnsafeRawBufferPointer {
        let chunk = chunks[head]
        let length = chunk.count - headOffset
        if let publication = chunk.publication {
            let base = publication._withUnsafeGuaranteedRef { $0.frameBase }
            return UnsafeRawBufferPointer(start: UnsafeRawPointer(base + headOffset), count: length)
        }
        if let logBase = chunk.logBase { return UnsafeRawBufferPointer(start: logBase + headOffset, count: length) }
        return UnsafeRawBufferPointer(start: ownBytes.readable(length), count: length)
    }

    /// How many bytes the next `SSL_write` offers: a large first chunk alone (up to ``tlsDirectLimit``), else the
    /// small chunks in a row up to ``tlsGatherLimit``.
    private func nextTLSBlockLength() -> Int {
        let first = chunks[head].count - headOffset
        if first >= Self.gatherChunkLimit { return min(first, Self.tlsDirectLimit) }
        return smallRun(limit: Self.tlsGatherLimit).bytes
    }

    /// Copies the first `length` unwritten bytes into `scratch`, in order. Invariant: `length <= pendingBytes` and
    /// `length <= scratch.count`.
    private func copyPending(_ length: Int, into scratch: UnsafeMutableRawBufferPointer) {
        precondition(length <= scratch.count && length <= pendingBytes, "TLS block larger than its scratch buffer")
        var copied = 0
        var index = head
        var offset = headOffset
        var replyOffset = 0
        // The reply chunks together, in order, from the reply buffer's first unwritten byte.
        let replyBase = ownBytes.count > 0 ? UnsafeRawPointer(ownBytes.readable(ownBytes.count)) : nil
        while copied < length {
            let chunk = chunks[index]
            let take = min(chunk.count - offset, length - copied)
            let source: UnsafeRawPointer
            if let publication = chunk.publication {
                source = UnsafeRawPointer(publication._withUnsafeGuaranteedRef { $0.frameBase } + offset)
            } else if let logBase = chunk.logBase {
                source = UnsafeRawPointer(logBase + offset)
            } else {
                source = replyBase! + replyOffset
                replyOffset += chunk.count - offset
            }
            (scratch.baseAddress! + copied).copyMemory(from: source, byteCount: take)
            copied += take
            index += 1
            offset = 0
        }
    }
}
