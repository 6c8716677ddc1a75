extension WebSocketFrameDecoder {
    /// Hands on what is here of the data frame `frame`: unmasked in place, UTF-8 checked in a text message. Returns
    /// nil when nothing could be handed on; `state` then says whether the frame ended (an empty frame, or the end of
    /// one whose last event already went out) or more bytes are needed.
    mutating func takeData(_ frame: DataFrame) -> WebSocketEvent? {
        var frame = frame
        let count = min(frame.remaining, writeIndex - readIndex)
        if frame.remaining > 0 && count == 0 { return nil }
        let start = readIndex
        unmask(start: start, count: count, mask: frame.mask, offset: frame.offset)
        if message?.isText == true {
            var utf8 = message!.utf8
            let bad = buffer.withUnsafeBytes { storage in
                utf8.validate(UnsafeRawBufferPointer(rebasing: storage[start..<(start + count)]))
            }
            message!.utf8 = utf8
            if let bad {
                // The bytes before the first bad one are handed on whatever the appends were, then the failure.
                readIndex += bad
                state = .failing(.invalidUTF8)
                return bad > 0 ? .data(buffer[start..<(start + bad)]) : nil
            }
        }
        readIndex += count
        frame.remaining -= count
        frame.offset += count
        if frame.remaining > 0 {
            state = .dataPayload(frame)
        } else {
            state = .awaitingHeader
            if frame.isFinal {
                let complete = message?.utf8.isAtCharacterBoundary ?? true
                message = nil
                if !complete { state = .failing(.invalidUTF8) }
            }
        }
        return count > 0 ? .data(buffer[start..<(start + count)]) : nil
    }

    /// Hands on a control frame once its whole payload (at most 125 bytes) is here.
    mutating func takeControl(opcode: WebSocketOpcode, count: Int, mask: UInt32) -> WebSocketEvent? {
        guard writeIndex - readIndex >= count else { return nil }
        let start = readIndex
        unmask(start: start, count: count, mask: mask, offset: 0)
        readIndex += count
        state = .awaitingHeader
        let payload = buffer[start..<(start + count)]
        switch opcode {
        case .ping: return .ping(payload)
        case .pong: return .pong(payload)
        case .close: return takeClose(payload)
        case .continuation, .text, .binary: preconditionFailure("data opcode \(opcode) in takeControl")
        }
    }

    /// Reads a close frame's payload (section 5.5.1): empty, or a code and a UTF-8 reason. Finishes the decoder.
    private mutating func takeClose(_ payload: ArraySlice<UInt8>) -> WebSocketEvent {
        if payload.isEmpty {
            finish()
            return .close(code: nil, reason: "")
        }
        guard payload.count >= 2 else { return fail(.closePayloadTooShort) }
        let code = WebSocketCloseCode(
            rawValue: UInt16(payload[payload.startIndex]) << 8 | UInt16(payload[payload.startIndex + 1]))
        guard code.isAllowedInCloseFrame else { return fail(.invalidCloseCode(code.rawValue)) }
        let reasonBytes = payload.dropFirst(2)
        var utf8 = UTF8StreamValidator()
        let bad = reasonBytes.withUnsafeBytes { utf8.validate($0) }
        guard bad == nil && utf8.isAtCharacterBoundary else { return fail(.invalidCloseReason) }
        let reason = String(decoding: reasonBytes, as: UTF8.self)
        finish()
        return .close(code: code, reason: reason)
    }
}
