import SubscriptionWire
import TestSupport
import XCTest

@testable import SubscriptionProtocol

/// The one-pass `PUB` (``CommandParser/takeSimplePublish()``) is a shortcut: it takes the plain `PUB` to a cached
/// number, and gives the same result as the general path for every stream, however it is fed (whole: the shortcut
/// sees complete commands; one byte at a time: it never does, the general path takes each line first).
final class ParserSimplePublishTests: XCTestCase {
    static let limits = ProtocolLimits(maxLine: 40, maxPayload: 64)

    /// A `PUB` to `N` first (the general path caches `N`), then `line`, then a `PING` to see the stream in step.
    private func afterWarmUp(_ line: String) -> [UInt8] {
        bytes("PUB N 1\nw\n") + bytes(line) + bytes("PING\n")
    }

    func testTheShortcutTakesAPlainPublishToACachedNumber() {
        var parser = CommandParser(limits: Self.limits)
        parser.append(contentsOf: bytes("PUB N 3\nabc\nPUB N 3\r\nxyz\r\nPUB M 1\nm\n"))
        XCTAssertNil(parser.takeSimplePublish(), "N is not cached yet")
        XCTAssertEqual(parser.next(), publish("N", bytes("abc")))
        guard case .publish(let number, let payload, let info)? = parser.takeSimplePublish() else {
            return XCTFail("the second PUB to N takes the shortcut")
        }
        XCTAssertEqual(number, "N")
        XCTAssertEqual(Array(payload), bytes("xyz"))
        XCTAssertEqual(info, [])
        XCTAssertNil(parser.takeSimplePublish(), "M is not cached")
        XCTAssertEqual(parser.next(), publish("M", bytes("m")))
        XCTAssertNil(parser.next())
    }

    /// Each case after a warm-up `PUB` to `N`: what the stream gives, the same in every feed mode.
    func testEveryNearMissGivesWhatTheGeneralPathGives() {
        let ping = ParseResult.success(.ping(text: nil))
        let warm = publish("N", bytes("w"))
        let maxPayload = String(repeating: "p", count: 64)
        // "PUB " + 34 bytes + " 1" is a 40-byte line, maxLine; one byte more is over it.
        let longest = "N." + String(repeating: "a", count: 32)
        let tooLong = longest + "a"
        let taken: [(String, [ParseResult])] = [
            ("PUB N 3\nabc\n", [publish("N", bytes("abc"))]),
            ("PUB N 3\r\nabc\r\n", [publish("N", bytes("abc"))]),
            ("PUB N 0\n\n", [publish("N", [])]),
            ("PUB N 3\na\nb\n", [publish("N", bytes("a\nb"))]),
            ("PUB N 3\n\rab\n", [publish("N", bytes("\rab"))]),
            ("PUB N 007\nabcdefg\n", [publish("N", bytes("abcdefg"))]),
            ("PUB N 0000000003\nabc\n", [publish("N", bytes("abc"))]),
            ("PUB N 00000000003\nabc\n", [publish("N", bytes("abc"))]),
            ("PUB N 64\n\(maxPayload)\n", [publish("N", bytes(maxPayload))]),
            ("PUB N 3 k=v\nabc\n", [publish("N", bytes("abc"), info: ["k=v"])]),
            ("pub N 3\nabc\n", [publish("N", bytes("abc"))]),
            ("PUB  N 3\nabc\n", [publish("N", bytes("abc"))]),
            ("PUB N  3\nabc\n", [publish("N", bytes("abc"))]),
            ("PUB N 3 \nabc\n", [publish("N", bytes("abc"))]),
            (
                "PUB \(longest) 1\nx\nPUB \(longest) 1\ny\n",
                [publish(longest, bytes("x")), publish(longest, bytes("y"))]
            ),
        ]
        for (line, expected) in taken {
            let results = parseInAllModes(afterWarmUp(line), limits: Self.limits, seeds: 0..<20)
            XCTAssertEqual(results, [warm] + expected + [ping], line.debugDescription)
        }
        // Failures: the code, and whether the connection stays open (the PING after it is then parsed).
        let refused: [(String, ErrorCode, closes: Bool)] = [
            ("PUB N 2\nabc\n", .proto, true),  // "c" after the payload
            ("PUB N 3\r\rabc\n", .proto, false),  // the size is "3\r"
            ("PUB N 65\n\(maxPayload)p\n", .tooBig, true),
            ("PUB N 99999999999\nabc\n", .tooBig, true),
            ("PUB N x3\nabc\n", .proto, false),
            ("PUB N\nabc\n", .proto, false),
            ("PUB \(tooLong) 1\nx\n", .tooBig, true),
        ]
        // A cached number on a line one byte over maxLine (a size with a leading zero).
        let overLong = parseInAllModes(
            bytes("PUB \(longest) 1\nx\nPUB \(longest) 01\nx\n"), limits: Self.limits, seeds: 0..<20)
        XCTAssertEqual(overLong.first, publish(longest, bytes("x")))
        XCTAssertEqual(overLong.count == 2 ? failureCode(overLong[1]) : nil, .tooBig)
        for (line, code, closes) in refused {
            let results = parseInAllModes(afterWarmUp(line), limits: Self.limits, seeds: 0..<20)
            XCTAssertEqual(results.first, warm, line.debugDescription)
            XCTAssertEqual(results.count > 1 ? failureCode(results[1]) : nil, code, line.debugDescription)
            XCTAssertEqual(results.last == ping, !closes, line.debugDescription)
        }
    }

    /// Long random streams of mostly simple `PUB`s to a few numbers, with near misses mixed in: the same results
    /// whole, byte by byte and in random chunks.
    func testRandomPublishStreamsAgreeInEveryFeedMode() {
        let forms = [
            "PUB A 3\nabc\n", "PUB B.c 0\n\n", "PUB A 3\r\nabc\r\n", "PUB A 4 k=v\nabcd\n", "pub B.c 1\nx\n",
            "PUB A 3\nab", "c\n", "PUB B.c 1", "\nz\n", "PING\n", "PUB A 3\n\n\n\n", "PUB C\n", "PUB A 65\n",
        ]
        for seed in UInt64(0)..<300 {
            var generator = SeededGenerator(seed: 5_000 + seed)
            var input: [UInt8] = []
            for _ in 0..<Int.random(in: 1...40, using: &generator) {
                input += bytes(forms.randomElement(using: &generator)!)
            }
            parseInAllModes(input, limits: Self.limits, seeds: seed..<(seed + 3))
        }
    }
}
