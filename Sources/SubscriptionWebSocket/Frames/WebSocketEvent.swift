/// What ``WebSocketFrameDecoder/next()`` found in the bytes a client sent.
public enum WebSocketEvent: Equatable, Sendable {
    /// Unmasked application data from a text, binary or continuation frame, in order, as it arrived: a frame's
    /// payload may come in several events and one event never spans two frames. A text message's bytes are UTF-8
    /// checked so far (a character may still be split across events). The slice shares the decoder's storage: use
    /// it before the next call on the decoder, or it is copied when the decoder writes again.
    case data(ArraySlice<UInt8>)
    /// A ping and its payload (0 to 125 bytes, unmasked); the server answers with a pong carrying the same bytes.
    case ping(ArraySlice<UInt8>)
    /// A pong and its payload (0 to 125 bytes, unmasked).
    case pong(ArraySlice<UInt8>)
    /// The client's close frame: its status code (nil when the frame had no payload) and reason (valid UTF-8, maybe
    /// empty). The server answers with a close frame and closes; the decoder is finished.
    case close(code: WebSocketCloseCode?, reason: String)
    /// The bytes broke RFC 6455: the server sends a close frame with the violation's
    /// ``WebSocketViolation/closeCode`` and closes. The decoder is finished.
    case failure(WebSocketViolation)
}

/// A client's bytes that break RFC 6455 or the server's limits, each with the close status code RFC 6455 names for
/// it (section 7.4.1).
public enum WebSocketViolation: Error, Equatable, Sendable, CustomStringConvertible {
    /// A frame with RSV1, RSV2 or RSV3 set (the bits, `0x70` masked), while no extension was agreed. 1002.
    case reservedBits(UInt8)
    /// An opcode RFC 6455 reserves (3-7, 0xB-0xF). 1002.
    case reservedOpcode(UInt8)
    /// A client frame without the mask bit: every client frame must be masked (section 5.1). 1002.
    case unmaskedFrame
    /// A close, ping or pong without FIN: control frames are never fragmented. 1002.
    case fragmentedControlFrame
    /// A close, ping or pong announcing more than 125 payload bytes (the 7-bit length 126 or 127). 1002.
    case controlFrameTooLong
    /// A continuation frame while no fragmented message is open. 1002.
    case continuationWithoutMessage
    /// A text or binary frame while a fragmented message is still open (it needs a continuation). 1002.
    case dataFrameInsideMessage
    /// A 64-bit payload length with its most significant bit set. 1002.
    case lengthOutOfRange
    /// A close frame with a 1-byte payload (a code takes two). 1002.
    case closePayloadTooShort
    /// A close frame with a code no endpoint may send (``WebSocketCloseCode/isAllowedInCloseFrame``). 1002.
    case invalidCloseCode(UInt16)
    /// A text message whose bytes are not UTF-8 (checked across fragments; a message may not end inside a
    /// character). 1007.
    case invalidUTF8
    /// A close frame whose reason is not UTF-8. 1007.
    case invalidCloseReason
    /// A data frame announcing this many payload bytes, over ``WebSocketLimits/maxFramePayload``. 1009.
    case frameTooBig(Int)
    /// A data frame that would take its message to this many payload bytes, over
    /// ``WebSocketLimits/maxMessagePayload``. 1009.
    case messageTooBig(Int)

    /// The status code of the close frame the server answers with (RFC 6455 section 7.4.1).
    public var closeCode: WebSocketCloseCode {
        switch self {
        case .invalidUTF8, .invalidCloseReason: return .invalidPayload
        case .frameTooBig, .messageTooBig: return .messageTooBig
        default: return .protocolError
        }
    }

    /// A short reason for the close frame and the log, ASCII, at most 123 bytes (what a close frame's reason holds).
    public var description: String {
        switch self {
        case .reservedBits(let bits): return "reserved bits set (0x\(String(bits, radix: 16)))"
        case .reservedOpcode(let opcode): return "reserved opcode 0x\(String(opcode, radix: 16))"
        case .unmaskedFrame: return "client frame not masked"
        case .fragmentedControlFrame: return "fragmented control frame"
        case .controlFrameTooLong: return "control frame over 125 bytes"
        case .continuationWithoutMessage: return "continuation frame without a message"
        case .dataFrameInsideMessage: return "data frame inside a fragmented message"
        case .lengthOutOfRange: return "payload length with its top bit set"
        case .closePayloadTooShort: return "close frame with a 1-byte payload"
        case .invalidCloseCode(let code): return "invalid close code \(code)"
        case .invalidUTF8: return "text message not UTF-8"
        case .invalidCloseReason: return "close reason not UTF-8"
        case .frameTooBig(let count): return "frame of \(count) bytes over the limit"
        case .messageTooBig(let count): return "message of \(count) bytes over the limit"
        }
    }
}
