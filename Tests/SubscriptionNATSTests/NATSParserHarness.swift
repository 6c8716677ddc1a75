import TestSupport
import XCTest

@testable import SubscriptionNATS

/// How the input reaches the parser.
enum FeedMode: CustomStringConvertible {
    /// One append with every byte.
    case allAtOnce
    /// One append per byte.
    case byteByByte
    /// Chunks of random size (0 to 97 bytes, sometimes thousands), chosen by the seeded generator, written through
    /// `withWritableTail` or `append`.
    case randomChunks(seed: UInt64)

    var description: String {
        switch self {
        case .allAtOnce: return "all at once"
        case .byteByByte: return "one byte at a time"
        case .randomChunks(let seed): return "random chunks, seed \(seed)"
        }
    }

    /// Every mode, with a few seeds.
    static let all: [FeedMode] = [.allAtOnce, .byteByByte] + (1...6).map { .randomChunks(seed: $0 &* 7919) }
}

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

    func drain() {
        while let result = parser.next() {
            XCTAssertFalse(failed, "a result after an error (\(mode))", file: file, line: line)
            results.append(result)
            if case .failure = result { failed = true }
        }
        let bound = parser.limits.maxControlLine + max(parser.limits.maxPayload, limits.maxPayload) + 4
        XCTAssertLessThanOrEqual(parser.bufferedByteCount, bound, "held too much (\(mode))", file: file, line: line)
        if failed { XCTAssertTrue(parser.isFinished, file: file, line: line) }
    }

    switch mode {
    case .allAtOnce:
        parser.append(contentsOf: input)
        drain()
    case .byteByByte:
        for byte in input {
            parser.append(contentsOf: [byte])
            drain()
        }
    case .randomChunks(let seed):
        var generator = SeededGenerator(seed: seed)
        var index = 0
        while index < input.count {
            let size =
                Int.random(in: 0...10, using: &generator) == 0
                ? Int.random(in: 0...5000, using: &generator) : Int.random(in: 0...97, using: &generator)
            let end = min(input.count, index + size)
            if Bool.random(using: &generator) {
                parser.withWritableTail(minimumCapacity: end - index) { space in
                    space.copyBytes(from: input[index..<end])
                    return end - index
                }
            } else {
                parser.append(contentsOf: input[index..<end])
            }
            index = end
            drain()
        }
    }
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
