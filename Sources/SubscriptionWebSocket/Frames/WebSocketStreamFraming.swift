/// The write state of a server that sends a byte stream over WebSocket: which bytes of the stream go out as the
/// payload of binary data frames, which go out as they are (a segment already framed or not framed at all: the
/// handshake's HTTP response, a pong, a close frame), and what is left of the frame being written. A plain value
/// (swift-nio's `PendingWritesManager`): the writer asks ``nextWrite(queued:)`` what to send, makes the system call,
/// and reports with ``wrote(_:of:)``. No bytes are copied: the stream's bytes stay where the writer queued them.
///
/// The stream is cut into frames at write time: each frame carries what was queued when it was started (up to the
/// next raw segment), so a subscriber behind on a busy number gets few large frames, one that keeps up one frame per
/// flush. A started frame is always finished before anything else goes out, so a raw segment (a control frame) never
/// lands inside a data frame, as RFC 6455 section 5.4 requires.
public struct WebSocketStreamFraming {
    /// What the next write carries, in order: ``headerCount`` bytes of the frame header (``withHeader(_:)``), then
    /// at most ``streamLimit`` bytes of the stream, from its first unwritten byte.
    public struct Write: Equatable {
        /// Header bytes to send first (0 when none is due).
        public var headerCount: Int
        /// The most stream bytes that may follow them.
        public var streamLimit: Int

        /// A write of `headerCount` header bytes and at most `streamLimit` stream bytes.
        public init(headerCount: Int, streamLimit: Int) {
            self.headerCount = headerCount
            self.streamLimit = streamLimit
        }
    }

    /// Stream bytes written so far (the position of the first unwritten one).
    public private(set) var position: UInt64 = 0
    /// Raw segments queued and not fully written, in stream order: where each starts, and its bytes.
    private var rawSegments: [(start: UInt64, count: Int)] = []
    /// The header of the frame being written (``headerLength`` bytes used).
    private var header: [UInt8] = Array(repeating: 0, count: WebSocketFrameEncoder.maxHeaderCount)
    /// The length of the current frame's header.
    private var headerLength = 0
    /// Header bytes already written.
    private var headerSent = 0
    /// Payload bytes of the current frame not written yet.
    private var frameLeft = 0

    /// Nothing written, nothing raw queued.
    public init() {}

    /// True while a frame is started and not finished (its header or payload is partly written).
    public var isInsideFrame: Bool { headerSent < headerLength || frameLeft > 0 }

    /// The `count` bytes just queued at the end of the stream, behind `queuedBefore` unwritten ones, go out as they
    /// are, not framed.
    public mutating func queuedRaw(count: Int, behind queuedBefore: Int) {
        guard count > 0 else { return }
        rawSegments.append((position + UInt64(queuedBefore), count))
    }

    /// What to write next when `queued` stream bytes are unwritten (nothing when `queued` is 0 and no header is due):
    /// the rest of a started frame, a raw segment, or a new frame of every queued byte up to the next raw segment.
    public mutating func nextWrite(queued: Int) -> Write {
        if headerSent < headerLength { return Write(headerCount: headerLength - headerSent, streamLimit: frameLeft) }
        if frameLeft > 0 { return Write(headerCount: 0, streamLimit: frameLeft) }
        headerLength = 0
        headerSent = 0
        var payload = queued
        if let raw = rawSegments.first {
            let end = raw.start + UInt64(raw.count)
            if raw.start <= position { return Write(headerCount: 0, streamLimit: Int(end - position)) }
            payload = min(payload, Int(raw.start - position))
        }
        guard payload > 0 else { return Write(headerCount: 0, streamLimit: 0) }
        headerLength = header.withUnsafeMutableBytes {
            WebSocketFrameEncoder.writeHeader(opcode: .binary, payloadCount: payload, into: $0)
        }
        frameLeft = payload
        return Write(headerCount: headerLength, streamLimit: payload)
    }

    /// Calls `body` with the header bytes still to send (empty when none).
    public func withHeader<Value, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Value
    ) throws(Failure) -> Value {
        let result = header.withUnsafeBytes { bytes -> Result<Value, Failure> in
            do throws(Failure) {
                return .success(try body(UnsafeRawBufferPointer(rebasing: bytes[headerSent..<headerLength])))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// `written` bytes of `write` went out (header first): returns how many of them were stream bytes, to release
    /// from the queue.
    public mutating func wrote(_ written: Int, of write: Write) -> Int {
        let headerPart = min(written, write.headerCount)
        headerSent += headerPart
        let streamPart = written - headerPart
        precondition(streamPart <= write.streamLimit, "wrote more stream bytes than offered")
        if frameLeft > 0 { frameLeft -= streamPart }
        position += UInt64(streamPart)
        while let raw = rawSegments.first, raw.start + UInt64(raw.count) <= position {
            rawSegments.removeFirst()
        }
        return streamPart
    }
}
