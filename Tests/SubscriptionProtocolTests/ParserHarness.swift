import SubscriptionWire
import TestSupport
import XCTest

@testable import SubscriptionProtocol

extension CommandParser: IncrementalInput {}

typealias ParseResult = Result<Command, ProtocolError>

/// The bytes of `text` (a convenience for test inputs).
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// A successful PUB with `payload` (and info pairs, `key=value` texts).
func publish(_ number: String, _ payload: [UInt8], info: [String] = []) -> ParseResult {
    let pairs = info.map { text in
        let parts = text.split(separator: "=", maxSplits: 1)
        return InfoPair(key: String(parts[0]), value: String(parts[1]))
    }
    return .success(.publish(number: number, payload: payload[...], info: pairs))
}

/// A successful SEND with `text`.
func send(_ number: String, _ text: String) -> ParseResult {
    .success(.send(number: number, payload: bytes(text)[...]))
}

/// The result of a failure with `code`, whatever its message.
func failureCode(_ result: ParseResult) -> ErrorCode? {
    if case .failure(let error) = result { return error.code }
    return nil
}

/// Feeds `input` in `mode`, draining `next()` after every append, and returns every result. Checks on the way
/// that the parser stays bounded (`maxLine + maxPayload + 4` bytes held after a drain) and that it stays silent
/// after a failure that closes the connection.
func parse(
    _ input: [UInt8],
    limits: ProtocolLimits = ProtocolLimits(),
    mode: FeedMode,
    file: StaticString = #filePath,
    line: UInt = #line
) -> [ParseResult] {
    var parser = CommandParser(limits: limits)
    var results: [ParseResult] = []
    var closed = false
    let bound = limits.maxLine + limits.maxPayload + 4

    func drain(_ parser: inout CommandParser) {
        while let result = parser.next() {
            XCTAssertFalse(closed, "a result after a closing failure (\(mode))", file: file, line: line)
            results.append(result)
            if case .failure(let error) = result, error.closesConnection { closed = true }
        }
        XCTAssertLessThanOrEqual(parser.bufferedByteCount, bound, "held too much (\(mode))", file: file, line: line)
        if closed {
            XCTAssertTrue(parser.isFinished, file: file, line: line)
            XCTAssertEqual(parser.bufferedByteCount, 0, file: file, line: line)
        }
    }

    mode.feed(input, to: &parser, drain: drain)
    // Nothing is left over: another empty look gives nothing.
    XCTAssertNil(parser.next(), file: file, line: line)
    return results
}

/// Parses `input` all at once, one byte at a time and in random chunks with `seeds`, asserts that every mode
/// gives the same results, and returns them.
@discardableResult
func parseInAllModes(
    _ input: [UInt8],
    limits: ProtocolLimits = ProtocolLimits(),
    seeds: Range<UInt64> = 0..<40,
    byteByByte: Bool = true,
    file: StaticString = #filePath,
    line: UInt = #line
) -> [ParseResult] {
    let reference = parse(input, limits: limits, mode: .allAtOnce, file: file, line: line)
    var modes = seeds.map { FeedMode.randomChunks(seed: $0) }
    if byteByByte { modes.append(.byteByByte) }
    for mode in modes {
        let results = parse(input, limits: limits, mode: mode, file: file, line: line)
        if results != reference {
            XCTFail("\(mode) gave \(results.count) results that differ from all at once", file: file, line: line)
            return reference
        }
    }
    return reference
}

/// Asserts that `input` parses to `expected` in every feeding mode.
func assertParses(
    _ input: [UInt8],
    _ expected: [ParseResult],
    limits: ProtocolLimits = ProtocolLimits(),
    seeds: Range<UInt64> = 0..<40,
    file: StaticString = #filePath,
    line: UInt = #line
) {
    let results = parseInAllModes(input, limits: limits, seeds: seeds, file: file, line: line)
    XCTAssertEqual(results, expected, file: file, line: line)
}

/// Asserts that `input` parses to `expected` in every feeding mode.
func assertParses(
    _ input: String,
    _ expected: [ParseResult],
    limits: ProtocolLimits = ProtocolLimits(),
    seeds: Range<UInt64> = 0..<40,
    file: StaticString = #filePath,
    line: UInt = #line
) {
    assertParses(bytes(input), expected, limits: limits, seeds: seeds, file: file, line: line)
}
