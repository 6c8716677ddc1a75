extension NATSParser {
    /// Finishes the message whose line starts at `readIndex` once its body and the CRLF after it are buffered.
    /// Nil while bytes are missing.
    mutating func takeBody(_ pending: PendingMessage) -> Result<NATSServerFrame, NATSProtocolError>? {
        let bodyStart = readIndex + pending.bodyOffset
        let bodyEnd = bodyStart + pending.totalCount
        guard writeIndex > bodyEnd else { return nil }
        let frameEnd: Int
        switch buffer[bodyEnd] {
        case 0x0A:
            frameEnd = bodyEnd + 1
        case 0x0D:
            guard writeIndex > bodyEnd + 1 else { return nil }
            guard buffer[bodyEnd + 1] == 0x0A else { return fail(.missingCRLFAfterPayload(subject: subject(pending))) }
            frameEnd = bodyEnd + 2
        default:
            return fail(.missingCRLFAfterPayload(subject: subject(pending)))
        }
        var headers: NATSHeaders?
        var payloadStart = bodyStart
        if let headerCount = pending.headerCount {
            let parsed: Result<NATSHeaders, NATSProtocolError> = buffer.withUnsafeBytes { bytes in
                do throws(NATSProtocolError) {
                    let block = UnsafeRawBufferPointer(rebasing: bytes[bodyStart..<(bodyStart + headerCount)])
                    return .success(try NATSHeaderBlock.parse(block))
                } catch {
                    return .failure(error)
                }
            }
            switch parsed {
            case .success(let block): headers = block
            case .failure(let error): return fail(error)
            }
            payloadStart += headerCount
        }
        let message = NATSMessage(
            subject: subject(pending),
            sid: pending.sid,
            replyTo: pending.reply.map { reply in
                String(
                    decoding: buffer[(readIndex + reply.offset)..<(readIndex + reply.offset + reply.count)],
                    as: UTF8.self)
            },
            headers: headers,
            payload: Array(buffer[payloadStart..<bodyEnd]))
        readIndex = frameEnd
        state = .awaitingLine
        return .success(.message(message))
    }

    private func subject(_ pending: PendingMessage) -> String {
        let start = readIndex + pending.subject.offset
        return String(decoding: buffer[start..<(start + pending.subject.count)], as: UTF8.self)
    }
}
