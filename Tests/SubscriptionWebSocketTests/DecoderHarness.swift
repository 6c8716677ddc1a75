import TestSupport
import XCTest

@testable import SubscriptionWebSocket

extension WebSocketFrameDecoder: IncrementalInput {}

/// The masking key of RFC 6455's examples.
let exampleMask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]

/// How a test frame spells its payload length.
enum LengthForm {
    /// The fewest bytes (7 bits, 16 or 64).
    case minimal
    /// Always the 16-bit form (126).
    case sixteen
    /// Always the 64-bit form (127).
    case sixtyFour
    /// The 64-bit form with this value, whatever the payload (for out-of-range lengths).
    case raw64(UInt64)
}

/// A frame as a client would send it: `payload` masked with `mask` (nil: unmasked, which a server refuses).
func clientFrame(
    _ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0, mask: [UInt8]? = exampleMask,
    length: LengthForm = .minimal
) -> [UInt8] {
    var frame: [UInt8] = [(fin ? 0x80 : 0) | rsv << 4 | opcode]
    let maskBit: UInt8 = mask == nil ? 0 : 0x80
    func append64(_ value: UInt64) {
        frame.append(maskBit | 127)
        for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }
    switch length {
    case .minimal where payload.count <= 125:
        frame.append(maskBit | UInt8(payload.count))
    case .minimal where payload.count <= 0xFFFF, .sixteen:
        frame += [maskBit | 126, UInt8(payload.count >> 8), UInt8(truncatingIfNeeded: payload.count)]
    case .minimal, .sixtyFour:
        append64(UInt64(payload.count))
    case .raw64(let value):
        append64(value)
    }
    guard let mask else { return frame + payload }
    frame += mask
    for (index, byte) in payload.enumerated() { frame.append(byte ^ mask[index % 4]) }
    return frame
}

/// A text frame carrying `text`'s UTF-8.
func textFrame(_ text: String, fin: Bool = true) -> [UInt8] { clientFrame(0x1, Array(text.utf8), fin: fin) }

/// The bytes of `text`.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A data event with `payload`.
func data(_ payload: [UInt8]) -> WebSocketEvent { .data(payload[...]) }

/// A data event with `text`'s UTF-8.
func data(_ text: String) -> WebSocketEvent { data(bytes(text)) }

/// `events` with each run of data events joined into one (the decoder cuts data where the appends cut it) and
/// empty data events dropped (it never sends one).
func coalesced(_ events: [WebSocketEvent]) -> [WebSocketEvent] {
    var result: [WebSocketEvent] = []
    for event in events {
        if case .data(let more) = event {
            if case .data(let before) = result.last {
                result[result.count - 1] = .data(before + more)
                continue
            }
        }
        result.append(event)
    }
    return result
}

/// Feeds `input` in `mode`, draining `next()` after every append, and returns every event (not coalesced). Checks
/// on the way that the decoder stays bounded (``WebSocketFrameDecoder/maxBufferedBytes`` after a drain), never
/// returns an empty data event, and stays silent after a failure or a close.
func decode(
    _ input: [UInt8], limits: WebSocketLimits = WebSocketLimits(maxFramePayload: 1 << 20), mode: FeedMode,
    file: StaticString = #filePath, line: UInt = #line
) -> [WebSocketEvent] {
    var decoder = WebSocketFrameDecoder(limits: limits)
    var events: [WebSocketEvent] = []
    var ended = false

    func drain(_ decoder: inout WebSocketFrameDecoder) {
        while let event = decoder.next() {
            XCTAssertFalse(ended, "an event after the end (\(mode))", file: file, line: line)
            if case .data(let payload) = event {
                XCTAssertFalse(payload.isEmpty, "an empty data event (\(mode))", file: file, line: line)
            }
            switch event {
            case .failure, .close: ended = true
            default: break
            }
            // Copy out of the decoder's storage, as a user that keeps the bytes must.
            switch event {
            case .data(let payload): events.append(.data(ArraySlice(Array(payload))))
            case .ping(let payload): events.append(.ping(ArraySlice(Array(payload))))
            case .pong(let payload): events.append(.pong(ArraySlice(Array(payload))))
            default: events.append(event)
            }
        }
        XCTAssertLessThanOrEqual(
            decoder.bufferedByteCount, WebSocketFrameDecoder.maxBufferedBytes, "held too much (\(mode))", file: file,
            line: line)
        if ended {
            XCTAssertTrue(decoder.isFinished, file: file, line: line)
            XCTAssertEqual(decoder.bufferedByteCount, 0, file: file, line: line)
        }
    }

    mode.feed(input, to: &decoder, drain: drain)
    XCTAssertNil(decoder.next(), file: file, line: line)
    return events
}

/// Decodes `input` all at once, one byte at a time and in random chunks with `seeds`, asserts that every mode gives
/// the same events once data is coalesced, and returns them (coalesced).
@discardableResult
func decodeInAllModes(
    _ input: [UInt8], limits: WebSocketLimits = WebSocketLimits(maxFramePayload: 1 << 20),
    seeds: Range<UInt64> = 0..<40, byteByByte: Bool = true, file: StaticString = #filePath, line: UInt = #line
) -> [WebSocketEvent] {
    let reference = coalesced(decode(input, limits: limits, mode: .allAtOnce, file: file, line: line))
    var modes = seeds.map { FeedMode.randomChunks(seed: $0) }
    if byteByByte { modes.append(.byteByByte) }
    for mode in modes {
        let events = coalesced(decode(input, limits: limits, mode: mode, file: file, line: line))
        if events != reference {
            XCTFail("\(mode) gave \(events.count) events that differ from all at once", file: file, line: line)
            return reference
        }
    }
    return reference
}

/// Asserts that `input` decodes to `expected` (data coalesced) in every feeding mode.
func assertDecodes(
    _ input: [UInt8], _ expected: [WebSocketEvent], limits: WebSocketLimits = WebSocketLimits(maxFramePayload: 1 << 20),
    seeds: Range<UInt64> = 0..<40, file: StaticString = #filePath, line: UInt = #line
) {
    let events = decodeInAllModes(input, limits: limits, seeds: seeds, file: file, line: line)
    XCTAssertEqual(events, expected, file: file, line: line)
}

/// Asserts that `input` decodes, in every feeding mode, to `before` and then a failure with `violation`, whose close
/// code is `code`.
func assertFails(
    _ input: [UInt8], _ violation: WebSocketViolation, code: UInt16, before: [WebSocketEvent] = [],
    limits: WebSocketLimits = WebSocketLimits(maxFramePayload: 1 << 20), file: StaticString = #filePath,
    line: UInt = #line
) {
    XCTAssertEqual(violation.closeCode.rawValue, code, "close code of \(violation)", file: file, line: line)
    assertDecodes(input, before + [.failure(violation)], limits: limits, file: file, line: line)
}
