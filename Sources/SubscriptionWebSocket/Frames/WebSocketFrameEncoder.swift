/// The frames a server sends (RFC 6455 section 5.2): never masked, no RSV bit. Plain functions over caller-owned
/// bytes: a data frame is its header (``writeHeader(opcode:payloadCount:isFinal:into:)``, at most
/// ``maxHeaderCount`` bytes) followed by the payload the server already holds, so the payload is never copied to be
/// framed; control frames are small and made whole.
public enum WebSocketFrameEncoder {
    /// The most bytes a server frame's header takes: 2, and 8 more for a payload over 65,535 bytes.
    public static let maxHeaderCount = 10

    /// The bytes of the header of a frame with `payloadCount` payload bytes: 2 up to 125, 4 up to 65,535, else 10.
    public static func headerCount(payloadCount: Int) -> Int {
        precondition(payloadCount >= 0, "a payload count must not be negative, got \(payloadCount)")
        return payloadCount <= 125 ? 2 : payloadCount <= 0xFFFF ? 4 : 10
    }

    /// Writes the header of an unmasked frame with `opcode` and `payloadCount` payload bytes (FIN set unless
    /// `isFinal` is false) at the start of `buffer`, which must hold ``headerCount(payloadCount:)`` bytes; returns
    /// that count. The length takes the fewest bytes that hold it, as section 5.2 requires.
    @discardableResult
    public static func writeHeader(
        opcode: WebSocketOpcode, payloadCount: Int, isFinal: Bool = true, into buffer: UnsafeMutableRawBufferPointer
    ) -> Int {
        let count = headerCount(payloadCount: payloadCount)
        precondition(buffer.count >= count, "a \(count)-byte header does not fit in \(buffer.count) bytes")
        precondition(!opcode.isControl || (isFinal && payloadCount <= 125), "control frames are final, <= 125 bytes")
        buffer[0] = (isFinal ? 0x80 : 0) | opcode.rawValue
        switch count {
        case 2:
            buffer[1] = UInt8(payloadCount)
        case 4:
            buffer[1] = 126
            buffer[2] = UInt8(truncatingIfNeeded: payloadCount >> 8)
            buffer[3] = UInt8(truncatingIfNeeded: payloadCount)
        default:
            buffer[1] = 127
            for index in 0..<8 {
                buffer[2 + index] = UInt8(truncatingIfNeeded: UInt64(payloadCount) >> (56 - 8 * index))
            }
        }
        return count
    }

    /// Appends the header of an unmasked frame with `opcode` and `payloadCount` payload bytes to `bytes`.
    public static func appendHeader(
        opcode: WebSocketOpcode, payloadCount: Int, isFinal: Bool = true, to bytes: inout [UInt8]
    ) {
        withUnsafeTemporaryAllocation(byteCount: maxHeaderCount, alignment: 1) { header in
            let count = writeHeader(opcode: opcode, payloadCount: payloadCount, isFinal: isFinal, into: header)
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: header[0..<count]))
        }
    }

    /// Appends a whole unmasked frame, header and `payload`, to `bytes`.
    public static func appendFrame<Payload: Collection<UInt8>>(
        opcode: WebSocketOpcode, payload: Payload, isFinal: Bool = true, to bytes: inout [UInt8]
    ) {
        appendHeader(opcode: opcode, payloadCount: payload.count, isFinal: isFinal, to: &bytes)
        bytes.append(contentsOf: payload)
    }

    /// A whole frame with `opcode` and `payload`.
    public static func frame<Payload: Collection<UInt8>>(opcode: WebSocketOpcode, payload: Payload) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(headerCount(payloadCount: payload.count) + payload.count)
        appendFrame(opcode: opcode, payload: payload, to: &bytes)
        return bytes
    }

    /// A ping frame carrying `payload` (at most 125 bytes).
    public static func pingFrame<Payload: Collection<UInt8>>(payload: Payload) -> [UInt8] {
        frame(opcode: .ping, payload: payload)
    }

    /// A pong frame carrying `payload` (at most 125 bytes): the answer to a ping with the same payload.
    public static func pongFrame<Payload: Collection<UInt8>>(payload: Payload) -> [UInt8] {
        frame(opcode: .pong, payload: payload)
    }

    /// A close frame: with no `code`, an empty payload (and `reason` is ignored); otherwise the code, big-endian,
    /// then `reason`'s UTF-8, cut at a character boundary to the 123 bytes a control frame leaves for it.
    public static func closeFrame(code: WebSocketCloseCode?, reason: String = "") -> [UInt8] {
        guard let code else { return frame(opcode: .close, payload: EmptyCollection()) }
        var payload: [UInt8] = [UInt8(code.rawValue >> 8), UInt8(truncatingIfNeeded: code.rawValue)]
        payload.append(contentsOf: reasonPrefix(reason, maxBytes: 123).utf8)
        return frame(opcode: .close, payload: payload)
    }

    /// The longest prefix of `text`, whole characters (Unicode scalars), of at most `maxBytes` bytes of UTF-8.
    static func reasonPrefix(_ text: String, maxBytes: Int) -> Substring {
        var used = 0
        var end = text.unicodeScalars.startIndex
        for scalar in text.unicodeScalars {
            let width = UTF8.width(scalar)
            if used + width > maxBytes { break }
            used += width
            end = text.unicodeScalars.index(after: end)
        }
        return Substring(text.unicodeScalars[..<end])
    }
}
