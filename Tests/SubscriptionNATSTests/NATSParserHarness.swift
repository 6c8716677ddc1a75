import TestSupport
import XCTest

@testable import SubscriptionNATS

extension NATSParser: IncrementalInput {}

typealias FrameResult = Result<NATSServerFrame, NATSProtocolError>

/// The bytes of `text`.
func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// Feeds `input` in `mode`, draining `next()` after every append, and returns every result. Checks that the parser
/// says nothing after an error and holds at most a line and a message after a drain.
func parse(
    _ input: [UInt8], limits: NATSParser.Limits = NATSParser.Limits(), mode: FeedMode,
    file: StaticString = #filePath, line: UInt = #line
) -> [FrameResult] {
    var parser = NATSParser(limits: limits)
    var results: [FrameResult] = []
    var failed = false

    func drain(_ parser: inout NATSParser) {
        while let result = parser.next() {
            XCTAssertFalse(failed, "a result after an error (\(mode))", file: file, line: line)
            results.append(result)
            if case .failure = result { failed = true }
        }
        let bound = parser.limits.maxControlLine + max(parser.limits.maxPayload, limits.maxPayload) + 4
        XCTAssertLessThanOrEqual(parser.bufferedByteCount, bound, "held too much (\(mode))", file: file, line: line)
        if failed { XCTAssertTrue(parser.isFinished, file: file, line: line) }
    }

    mode.feed(input, to: &parser, drain: drain)
    return results
}

/// Checks that `input` parses to `expected` in every feed mode.
func assertParses(
    _ input: [UInt8], _ expected: [FrameResult], limits: NATSParser.Limits = NATSParser.Limits(),
    file: StaticString = #filePath, line: UInt = #line
) {
    for mode in FeedMode.all {
        let results = parse(input, limits: limits, mode: mode, file: file, line: line)
        XCTAssertEqual(results, expected, "fed \(mode)", file: file, line: line)
    }
}

/// A message frame.
func message(
    _ subject: String, _ sid: UInt64, reply: String? = nil, headers: NATSHeaders? = nil, _ payload: String
) -> FrameResult {
    .success(
        .message(NATSMessage(subject: subject, sid: sid, replyTo: reply, headers: headers, payload: bytes(payload))))
}
