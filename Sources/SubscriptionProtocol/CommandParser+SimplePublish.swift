import SubscriptionWire

/// The common `PUB` in one pass: `PUB <number> <nbytes>` LF (or CR LF), the payload and its LF (or CR LF) all
/// buffered, no info pair, and a number this client published to before (in its ``NumberCache``, so checked
/// already). Such a command is most of what a publisher sends; the general path (``CommandParser/takeLine()``, a
/// ``LineParser``, then ``CommandParser/takePayload(_:)``) spends most of an ingest's parse in its steps: a line
/// scan, a verb table, argument ranges, a state change and back.
///
/// It is a shortcut, not a second grammar: anything else (another verb or spelling, a space more or less, info
/// pairs, a number not cached, a size over the limit or with leading characters that are not digits, a line over
/// `maxLine`, a payload not all here, bytes after the payload other than LF or CR LF) takes the general path
/// unchanged, which then answers exactly as it always did. What it returns is what the general path returns for
/// the same bytes (`CommandParserTests` feeds the same streams whole, byte by byte and in random chunks, and a
/// fast and a slow spelling of each case).
extension CommandParser {
    /// Where the parts of a simple `PUB` lie, as offsets from `readIndex`.
    private struct SimplePublish {
        var numberEnd: Int
        let payloadStart: Int
        var payloadEnd: Int
        var frameEnd: Int
    }

    /// The simple `PUB` at `readIndex`, consumed, or nil (nothing consumed) for anything the general path must see.
    /// Called only while a line is awaited.
    mutating func takeSimplePublish() -> Command? {
        let available = input.writeIndex - input.readIndex
        // "PUB n 0" LF LF is the shortest.
        guard available >= 9 else { return nil }
        let maxLine = limits.maxLine
        let maxPayload = limits.maxPayload
        let start = input.readIndex
        let found: SimplePublish? = input.bytes.withUnsafeBufferPointer { storage in
            // Invariant: start + available <= storage.count (writeIndex never passes the buffer's count), so every
            // read below, at an offset under `available`, is inside the buffer.
            Self.scanSimplePublish(
                UnsafeBufferPointer(rebasing: storage[start..<(start + available)]), maxLine: maxLine,
                maxPayload: maxPayload)
        }
        guard let found else { return nil }
        let numberBytes = input.bytes[(start + 4)..<(start + found.numberEnd)]
        // A number not cached is checked and remembered by the general path.
        guard let number = cachedNumber(numberBytes) else { return nil }
        input.readIndex = start + found.frameEnd
        scanned = 0
        return .publish(
            number: number, payload: input.bytes[(start + found.payloadStart)..<(start + found.payloadEnd)], info: [])
    }

    /// One past the LF or CR LF at `index` (`index < bytes.count`); nil when neither is there.
    @inline(__always)
    private static func afterLineEnd(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int? {
        if bytes[index] == ASCII.lf { return index + 1 }
        if bytes[index] == ASCII.cr && index + 1 < bytes.count && bytes[index + 1] == ASCII.lf { return index + 2 }
        return nil
    }

    /// Reads a simple `PUB` at the start of `bytes`; nil for anything else.
    private static func scanSimplePublish(_ bytes: UnsafeBufferPointer<UInt8>, maxLine: Int, maxPayload: Int)
        -> SimplePublish?
    {
        let count = bytes.count
        guard bytes[0] == UInt8(ascii: "P"), bytes[1] == UInt8(ascii: "U"), bytes[2] == UInt8(ascii: "B"),
            bytes[3] == ASCII.space
        else { return nil }
        var index = 4
        while index < count {
            let byte = bytes[index]
            if byte == ASCII.space || byte == ASCII.lf || byte == ASCII.cr { break }
            index += 1
        }
        let numberEnd = index
        guard numberEnd > 4, index < count, bytes[index] == ASCII.space else { return nil }
        index += 1
        let digitsStart = index
        var size = 0
        // At most 10 digits: no overflow; a longer size takes the general path (TOOBIG or PROTO there).
        while index < count && index - digitsStart < 10 {
            let byte = bytes[index]
            guard byte >= ASCII.zero && byte <= ASCII.nine else { break }
            size = size * 10 + Int(byte - ASCII.zero)
            index += 1
        }
        guard index > digitsStart, index < count, index <= maxLine, size <= maxPayload else { return nil }
        guard let payloadStart = afterLineEnd(bytes, at: index) else { return nil }
        let payloadEnd = payloadStart + size
        guard payloadEnd < count, let frameEnd = afterLineEnd(bytes, at: payloadEnd) else { return nil }
        return SimplePublish(
            numberEnd: numberEnd, payloadStart: payloadStart, payloadEnd: payloadEnd, frameEnd: frameEnd)
    }
}

extension CommandParser {
    /// The cached `String` of a number this client published to lately (``NumberCache``), or nil. The last number
    /// is asked about here first: a call of the cache's method with a slice of the parser's buffer costs a retain of
    /// that buffer. (Mutating, so that the call borrows the parser instead of copying it.)
    mutating func cachedNumber(_ bytes: ArraySlice<UInt8>) -> String? {
        if NumberCache.same(bytes, numberCache.lastBytes) { return numberCache.last }
        return numberCache.number(inTableMatching: bytes)
    }
}
