/// The bookkeeping at the head of a ``Frame``.
struct FrameHeader {
    /// Bytes written so far.
    var count: Int
    /// The memory the frame holds (its bytes and the object around them), charged to every session it is queued
    /// for: the flow-control mark and `max_pending` count memory held, not payload bytes.
    let heldBytes: Int
}

/// One published message's wire bytes in one allocation, shared by reference (redis shared objects, mosquitto's
/// message store).
///
/// A published message is framed once into a `Frame` and the same object is queued for every subscriber; each
/// queue holds a reference, not a copy. The element storage never moves, so its address can be handed to writev(2)
/// while the frame is alive.
final class Frame: ManagedBuffer<FrameHeader, UInt8> {
    /// What a frame costs beyond its bytes: the object header, ``FrameHeader`` and the allocator's own header.
    static let overhead = 48

    /// Makes an empty frame with room for at least `capacity` bytes.
    static func make(capacity: Int) -> Frame {
        let buffer = Frame.create(minimumCapacity: capacity) { _ in
            FrameHeader(count: 0, heldBytes: capacity + overhead)
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

    /// The memory this frame holds (see ``FrameHeader/heldBytes``).
    var heldBytes: Int { withUnsafeMutablePointerToHeader { $0.pointee.heldBytes } }
}
