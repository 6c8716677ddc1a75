// libFuzzer target for the WebSocket frame decoder (`make fuzz-ws`). The Makefile compiles it together with the
// decoder's sources (Sources/SubscriptionWebSocket/Frames, not the handshake, which needs OpenSSL) into one module,
// the wire's read buffer linked in as a library. Every input is fed all at once and again in chunks taken from the
// input itself; both must give the same events once data is joined, the decoder must hold no more than
// WebSocketFrameDecoder.maxBufferedBytes after each drain, and nothing may follow a failure or a close.
//
// The first byte picks the limits, so inputs also reach the 1009 refusals; most random headers lack the mask bit,
// so the dictionary (Tests/Fuzz/websocket.dict) offers masked headers.

/// The events of one feeding, data joined into runs, with a check after each drain.
struct Collected: Equatable {
    var events: [WebSocketEvent] = []
    var ended = false

    mutating func drain(_ decoder: inout WebSocketFrameDecoder) {
        while let event = decoder.next() {
            precondition(!ended, "an event after a failure or a close")
            switch event {
            case .data(let bytes):
                precondition(!bytes.isEmpty, "an empty data event")
                if case .data(let before) = events.last {
                    events[events.count - 1] = .data(ArraySlice(Array(before) + Array(bytes)))
                } else {
                    events.append(.data(ArraySlice(Array(bytes))))
                }
            case .ping(let bytes): events.append(.ping(ArraySlice(Array(bytes))))
            case .pong(let bytes): events.append(.pong(ArraySlice(Array(bytes))))
            case .close, .failure:
                ended = true
                events.append(event)
            }
        }
        precondition(decoder.bufferedByteCount <= WebSocketFrameDecoder.maxBufferedBytes, "decoder buffer unbounded")
        precondition(!ended || (decoder.isFinished && decoder.bufferedByteCount == 0), "not finished after the end")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocketFrameDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let limitsByte = data[0]
    let bytes = UnsafeBufferPointer(start: data + 1, count: size - 1)
    let frameLimit = [0, 1, 125, 126, 1000, 65536, 1 << 20, .max][Int(limitsByte & 7)]
    let messageLimit = [Int.max, 0, 200, 70_000][Int(limitsByte >> 3 & 3)]
    let limits = WebSocketLimits(maxFramePayload: frameLimit, maxMessagePayload: messageLimit)

    var whole = WebSocketFrameDecoder(limits: limits)
    var expected = Collected()
    whole.append(UnsafeRawBufferPointer(bytes))
    expected.drain(&whole)

    var chunked = WebSocketFrameDecoder(limits: limits)
    var got = Collected()
    var offset = 0
    var step = 1
    while offset < bytes.count {
        let end = min(bytes.count, offset + step)
        chunked.append(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[offset..<end])))
        got.drain(&chunked)
        offset = end
        step = Int(bytes[offset - 1] % 11) + 1
    }
    precondition(got == expected, "chunked decode differs from whole decode")
    return 0
}
