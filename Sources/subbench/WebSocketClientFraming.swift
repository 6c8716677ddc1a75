/// The client side of WebSocket framing, as much as the fan-out scenario needs over `--ws`: every write becomes one
/// masked binary frame, and the server's frames are taken apart in place so the readers see the line protocol's
/// bytes as over TCP. Not a general client: it never fragments, answers no ping (subd sends none) and stops at a
/// close frame.
///
/// The masking key is zero (each payload byte XORed with 0): RFC 6455 asks clients for unpredictable keys to protect
/// proxies from a browser page's crafted bytes, which a benchmark's own payloads are not; the server unmasks every
/// byte all the same, so its work is what a browser's traffic costs it.
struct WebSocketClientFraming {
    /// Payload bytes of the current server frame still to come.
    private var payloadLeft = 0
    /// True when the current frame is a control frame (its payload is skipped, not handed on).
    private var skipping = false
    /// The bytes of a server frame header read so far (at most 10).
    private var header: [UInt8] = []
    /// True once a close frame arrived: the stream ends there.
    private(set) var isClosed = false

    /// The header of a masked binary frame of `count` payload bytes with a zero key.
    static func header(payloadCount count: Int) -> [UInt8] {
        var bytes: [UInt8] = [0x82]
        if count <= 125 {
            bytes.append(0x80 | UInt8(count))
        } else if count <= 0xFFFF {
            bytes += [0x80 | 126, UInt8(count >> 8), UInt8(truncatingIfNeeded: count)]
        } else {
            bytes.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: count >> shift))
            }
        }
        return bytes + [0, 0, 0, 0]
    }

    /// Removes the frame headers (and any control frame) from the `count` bytes at the start of `buffer`, moving the
    /// payload bytes together at its start; returns how many remain.
    mutating func unframe(_ buffer: UnsafeMutableRawBufferPointer, count: Int) -> Int {
        var read = 0
        var kept = 0
        while read < count && !isClosed {
            if payloadLeft > 0 {
                let take = min(payloadLeft, count - read)
                if !skipping {
                    // Overlapping ranges: the kept bytes are never ahead of the read ones.
                    (buffer.baseAddress! + kept).copyMemory(from: buffer.baseAddress! + read, byteCount: take)
                    kept += take
                }
                read += take
                payloadLeft -= take
                continue
            }
            header.append(buffer[read])
            read += 1
            guard let (opcode, length) = completeHeader() else { continue }
            header.removeAll(keepingCapacity: true)
            if opcode == 0x8 { isClosed = true }
            skipping = opcode >= 0x8
            payloadLeft = length
        }
        return kept
    }

    /// The opcode and payload length once ``header`` holds a whole server (unmasked) frame header.
    private func completeHeader() -> (opcode: UInt8, length: Int)? {
        guard header.count >= 2 else { return nil }
        let opcode = header[0] & 0x0F
        switch header[1] & 0x7F {
        case 126:
            guard header.count == 4 else { return nil }
            return (opcode, Int(header[2]) << 8 | Int(header[3]))
        case 127:
            guard header.count == 10 else { return nil }
            return (opcode, header[2...].reduce(0) { $0 << 8 | Int($1) })
        case let length:
            return (opcode, Int(length))
        }
    }
}
