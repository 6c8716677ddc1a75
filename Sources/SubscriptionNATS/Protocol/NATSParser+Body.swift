extension NATSParser {
    /// Finishes the message whose line starts at `readIndex` once its body and the CRLF after it are buffered.
    /// Nil while bytes are missing.
    mutating func takeBody(_ pending: PendingMessage) -> Result<NATSServerFrame, NATSProtocolError>? {
        let bodyStart = input.readIndex + pending.bodyOffset
        let bodyEnd = bodyStart + pending.totalCount
        guard input.writeIndex > bodyEnd else { return nil }
        let frameEnd: Int
        switch input.bytes[bodyEnd] {
        case 0x0A:
            frameEnd = bodyEnd + 1
        case 0x0D:
            guard input.writeIndex > bodyEnd + 1 else { return nil }
            guard input.bytes[bodyEnd + 1] == 0x0A else {
                return fail(.missingCRLFAfterPayload(subject: subject(pending)))
            }
            frameEnd = bodyEnd + 2
        default:
            return fail(.missingCRLFAfterPayload(subject: subject(pending)))
        }
        var headers: NATSHeaders?
        var payloadStart = bodyStart
        if let headerCount = pending.headerCount {
            let parsed: Result<NATSHeaders, NATSProtocolError> = input.bytes.withUnsafeBytes { bytes in
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
                    decoding: input.bytes[
                        (input.readIndex + reply.offset)..<(input.readIndex + reply.offset + reply.count)],
                    as: UTF8.self)
            },
            headers: headers,
            payload: Array(input.bytes[payloadStart..<bodyEnd]))
        input.readIndex = frameEnd
        state = .awaitingLine
        return .success(.message(message))
    }

    private func subject(_ pending: PendingMessage) -> String {
        let start = input.readIndex + pending.subject.offset
        return String(decoding: input.bytes[start..<(start + pending.subject.count)], as: UTF8.self)
    }
}
