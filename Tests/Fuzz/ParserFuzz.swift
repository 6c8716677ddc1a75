// libFuzzer target for the command parser (`make fuzz`). The Makefile compiles it together with the parser's
// sources into one module (the wire's rules linked in as a library). Every input is fed all at once and again in
// chunks taken from the input itself; both must give the same commands, and the parser's buffer must stay bounded.

import SubscriptionWire

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCommandParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let limits = ProtocolLimits(maxLine: 512, maxPayload: 1024)

    var whole = CommandParser(limits: limits)
    whole.append(UnsafeRawBufferPointer(bytes))
    var expected: [Result<Command, ProtocolError>] = []
    while let result = whole.next() { expected.append(result) }

    var chunked = CommandParser(limits: limits)
    var got: [Result<Command, ProtocolError>] = []
    var offset = 0
    var step = 1
    while offset < size {
        let end = min(size, offset + step)
        chunked.append(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[offset..<end])))
        while let result = chunked.next() { got.append(result) }
        precondition(chunked.bufferedByteCount <= limits.maxLine + limits.maxPayload + 4, "parser buffer unbounded")
        offset = end
        step = Int(bytes[offset - 1] % 7) + 1
    }
    precondition(got == expected, "chunked parse differs from whole parse")
    return 0
}
