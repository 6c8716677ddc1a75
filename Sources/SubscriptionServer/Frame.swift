/// The bookkeeping at the head of a ``Frame``.
struct FrameHeader {
    /// Bytes written so far.
    var count: Int
    /// True for a session's own reply block (appendable); false for a shared message frame (immutable once made).
    var isReplyBlock: Bool
}

/// A block of bytes in one allocation, shared by reference (redis shared objects, mosquitto's message store).
///
/// A published message is framed once into a `Frame` and the same object is queued for every subscriber; each
/// queue holds a reference, not a copy. Replies use appendable frames of their own. The element storage never
/// moves, so its address can be handed to writev(2) while the frame is alive.
final class Frame: ManagedBuffer<FrameHeader, UInt8> {
    /// Makes an empty frame with room for at least `capacity` bytes.
    static func make(capacity: Int, isReplyBlock: Bool) -> Frame {
        let buffer = Frame.create(minimumCapacity: capacity) { _ in
            FrameHeader(count: 0, isReplyBlock: isReplyBlock)
        }
        return unsafeDowncast(buffer, to: Frame.self)
    }

    /// The start of the bytes; stable for the frame's lifetime.
    var base: UnsafeMutablePointer<UInt8> {
        withUnsafeMutablePointerToElements { $0 }
    }

    // The header is read and written through its pointer: the `header` property is an exclusivity-checked
    // access, which showed up in profiles at several percent of the fan-out hot path.

    /// Bytes written.
    var count: Int {
        get { withUnsafeMutablePointerToHeader { $0.pointee.count } }
        set { withUnsafeMutablePointerToHeader { $0.pointee.count = newValue } }
    }

    /// True for a session's own reply block (appendable).
    var isReplyBlock: Bool { withUnsafeMutablePointerToHeader { $0.pointee.isReplyBlock } }

    /// Free bytes left at the end.
    var freeCapacity: Int { capacity - count }

    /// Appends as many of `bytes` as fit; returns how many were copied.
    func append(_ bytes: UnsafeRawBufferPointer) -> Int {
        let n = min(bytes.count, freeCapacity)
        if n > 0, let source = bytes.baseAddress {
            let start = count
            (base + start).update(from: source.assumingMemoryBound(to: UInt8.self), count: n)
            count = start + n
        }
        return n
    }
}
