/// The sizes a WebSocket decoder accepts; anything larger is ``WebSocketViolation/frameTooBig(_:)`` or
/// ``WebSocketViolation/messageTooBig(_:)``, close code 1009, refused as soon as the frame's header announces it.
///
/// subd reads a message's bytes as part of the line protocol's stream, so neither limit bounds what the decoder holds
/// (it hands data on as it arrives, ``WebSocketFrameDecoder``): they bound what one frame, or one message, may
/// announce. The server derives them from its `max_line` and `max_payload`.
public struct WebSocketLimits: Equatable, Sendable {
    /// The most payload bytes one data frame may carry.
    public var maxFramePayload: Int
    /// The most payload bytes one data message may carry, all its fragments together.
    public var maxMessagePayload: Int

    /// Limits of `maxFramePayload` bytes per data frame and `maxMessagePayload` per message (by default no limit
    /// but the frames').
    public init(maxFramePayload: Int, maxMessagePayload: Int = .max) {
        precondition(maxFramePayload >= 0 && maxMessagePayload >= 0, "a WebSocket limit must not be negative")
        self.maxFramePayload = maxFramePayload
        self.maxMessagePayload = maxMessagePayload
    }
}
