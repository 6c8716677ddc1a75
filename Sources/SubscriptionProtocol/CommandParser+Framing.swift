import SubscriptionWire

/// Byte values the parser looks for.
enum ASCII {
    static let lf: UInt8 = 0x0A
    static let cr: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let equals = UInt8(ascii: "=")
    static let zero = UInt8(ascii: "0")
    static let nine = UInt8(ascii: "9")
}

/// A complete line in the buffer.
struct LineSpan {
    /// The line's bytes, without the LF and a CR right before it.
    var content: Range<Int>
    /// One past the LF: where the next line starts.
    var end: Int
}

extension CommandParser {
    /// Finds the next complete line, scanning only bytes not scanned before. Nil when more bytes are needed;
    /// a `TOOBIG` failure when the line is (or must become) longer than `maxLine`.
    mutating func takeLine() -> Result<LineSpan, ProtocolError>? {
        let maxLine = limits.maxLine
        switch ReadBuffer.nextLine(
            in: input.bytes, from: input.readIndex, to: input.writeIndex, scanned: &scanned, maxLine: maxLine)
        {
        case .line(let content, let end): return .success(LineSpan(content: content, end: end))
        case .incomplete: return nil
        case .tooLong: return .failure(Self.lineTooLong(maxLine))
        }
    }

    /// Finishes the `PUB` whose line starts at `readIndex` once its payload and the LF (or CR LF) after it
    /// are buffered. Nil while bytes are missing.
    mutating func takePayload(_ pending: PendingPublish) -> Result<Command, ProtocolError>? {
        let payloadStart = input.readIndex + pending.payloadOffset
        let payloadEnd = payloadStart + pending.payloadCount
        guard input.writeIndex > payloadEnd else { return nil }
        let frameEnd: Int
        switch input.bytes[payloadEnd] {
        case ASCII.lf:
            frameEnd = payloadEnd + 1
        case ASCII.cr:
            guard input.writeIndex > payloadEnd + 1 else { return nil }
            guard input.bytes[payloadEnd + 1] == ASCII.lf else { return fail(Self.noLFAfterPayload(pending)) }
            frameEnd = payloadEnd + 2
        default:
            return fail(Self.noLFAfterPayload(pending))
        }
        let numberStart = input.readIndex + pending.numberOffset
        let numberBytes = input.bytes[numberStart..<(numberStart + pending.numberCount)]
        input.readIndex = frameEnd
        state = .awaitingLine
        // The PUB's pairs (or their error) are taken now, whatever comes next, so none is left for the next PUB.
        var info: [InfoPair] = []
        if !pendingInfo.isEmpty { swap(&info, &pendingInfo) }
        let infoError = pendingInfoError
        pendingInfoError = nil
        let number: String
        if let cached = cachedNumber(numberBytes) {
            number = cached
        } else {
            do {
                try Names.check(numberBytes, allowWildcards: false)
            } catch {
                failedVerb = .pub
                return .failure(Self.invalidName("number", numberBytes, error))
            }
            number = String(decoding: numberBytes, as: UTF8.self)
            numberCache.insert(number)
        }
        if let infoError {
            failedVerb = .pub
            return .failure(infoError)
        }
        return .success(.publish(number: number, payload: input.bytes[payloadStart..<payloadEnd], info: info))
    }

    static func lineTooLong(_ maxLine: Int) -> ProtocolError {
        ProtocolError(.tooBig, "line longer than \(maxLine) bytes", closesConnection: true)
    }

    static func noLFAfterPayload(_ pending: PendingPublish) -> ProtocolError {
        ProtocolError(
            .proto,
            "no LF after the \(pending.payloadCount)-byte payload of PUB (nbytes must be the exact payload size)",
            closesConnection: true
        )
    }
}
