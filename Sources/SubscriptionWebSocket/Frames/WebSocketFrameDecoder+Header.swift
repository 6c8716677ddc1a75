extension WebSocketFrameDecoder {
    /// What ``takeHeader()`` found.
    enum HeaderOutcome {
        /// The header is not complete yet (nothing found wrong in what is here).
        case needMore
        /// The header broke a rule.
        case failure(WebSocketViolation)
        /// A header was consumed; `state` waits for its payload.
        case frame
    }

    /// Reads the frame header at `readIndex` (section 5.2), checking each rule as soon as its bytes are here.
    mutating func takeHeader() -> HeaderOutcome {
        let available = writeIndex - readIndex
        guard available >= 2 else { return .needMore }
        let first = buffer[readIndex]
        let second = buffer[readIndex + 1]
        let isFinal = first & 0x80 != 0
        if first & 0x70 != 0 { return .failure(.reservedBits(first & 0x70)) }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            return .failure(.reservedOpcode(first & 0x0F))
        }
        if opcode.isControl && !isFinal { return .failure(.fragmentedControlFrame) }
        if second & 0x80 == 0 { return .failure(.unmaskedFrame) }
        let shortLength = Int(second & 0x7F)
        if opcode.isControl && shortLength > 125 { return .failure(.controlFrameTooLong) }
        switch opcode {
        case .continuation where message == nil: return .failure(.continuationWithoutMessage)
        case .text where message != nil, .binary where message != nil: return .failure(.dataFrameInsideMessage)
        default: break
        }

        let lengthBytes = shortLength == 126 ? 2 : shortLength == 127 ? 8 : 0
        let headerCount = 2 + lengthBytes + 4
        guard available >= headerCount else { return .needMore }
        var count = shortLength
        if lengthBytes > 0 {
            var length: UInt64 = 0
            for index in 0..<lengthBytes { length = length << 8 | UInt64(buffer[readIndex + 2 + index]) }
            if length >> 63 != 0 { return .failure(.lengthOutOfRange) }
            count = Int(length)
        }
        var mask: UInt32 = 0
        for index in 0..<4 { mask |= UInt32(buffer[readIndex + 2 + lengthBytes + index]) << (8 * index) }

        if opcode.isControl {
            readIndex += headerCount
            state = .controlPayload(opcode: opcode, count: count, mask: mask)
            return .frame
        }
        if count > limits.maxFramePayload { return .failure(.frameTooBig(count)) }
        let before = message?.payloadCount ?? 0
        let (total, overflow) = before.addingReportingOverflow(count)
        if overflow || total > limits.maxMessagePayload { return .failure(.messageTooBig(overflow ? .max : total)) }
        readIndex += headerCount
        if opcode == .continuation {
            message?.payloadCount = total
        } else {
            message = OpenMessage(isText: opcode == .text, payloadCount: total)
        }
        state = .dataPayload(DataFrame(remaining: count, mask: mask, offset: 0, isFinal: isFinal))
        return .frame
    }
}
