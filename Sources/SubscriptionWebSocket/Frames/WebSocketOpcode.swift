/// A frame's opcode (RFC 6455 section 5.2): the low four bits of its first byte. The values RFC 6455 leaves reserved
/// (3-7, 0xB-0xF) have no case: the decoder refuses them with 1002.
public enum WebSocketOpcode: UInt8, Sendable, CaseIterable {
    /// The next fragment of the message in progress.
    case continuation = 0x0
    /// The first (or only) frame of a text message: its bytes, all fragments together, are UTF-8.
    case text = 0x1
    /// The first (or only) frame of a binary message.
    case binary = 0x2
    /// The close handshake: an optional status code and UTF-8 reason.
    case close = 0x8
    /// A ping: the peer answers with a pong carrying the same payload.
    case ping = 0x9
    /// A pong: the answer to a ping, or a one-way keepalive.
    case pong = 0xA

    /// True for close, ping and pong: at most 125 payload bytes, never fragmented, allowed between the fragments of a
    /// message.
    public var isControl: Bool { rawValue & 0x8 != 0 }
}
