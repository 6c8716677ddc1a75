import TestSupport
import XCTest

@testable import SubscriptionProtocol

/// Thousands of random byte strings: no crash, the same results however they are fed, bounded memory.
final class ParserFuzzTests: XCTestCase {
    static let limits = ProtocolLimits(maxLine: 40, maxPayload: 64)

    /// Pieces that make random input look enough like the protocol to reach every state.
    static let pieces: [[UInt8]] =
        [
            "PUB ", "pub ", "SEND ", "SUB ", "UNSUB ", "HELLO ", "CREATE ", "REMOVE ", "LIST", "STATS", "PING",
            "QUIT", "name=", "token=", "from=", "a.b", "*", ">", "..", "N", " ", "  ", "\n", "\r\n", "\r", "0", "3",
            "10", "64", "65", "9999999999", "12345678901", "=", "\t", "é",
        ].map { Array($0.utf8) } + [[0x00], [0xFF], [0xC3], [0x7F]]

    static func randomInput(using generator: inout SeededGenerator) -> [UInt8] {
        var input: [UInt8] = []
        for _ in 0..<Int.random(in: 0...60, using: &generator) {
            if Int.random(in: 0..<4, using: &generator) == 0 {
                input.append(UInt8.random(in: 0...255, using: &generator))
            } else {
                input += pieces.randomElement(using: &generator)!
            }
        }
        return input
    }

    func checkWellFormed(_ results: [ParseResult], _ seed: UInt64) {
        for (index, result) in results.enumerated() {
            guard case .failure(let error) = result else { continue }
            XCTAssertTrue([.proto, .unknown, .name, .tooBig].contains(error.code), "seed \(seed): \(error)")
            if error.code == .tooBig { XCTAssertTrue(error.closesConnection, "seed \(seed)") }
            if error.closesConnection { XCTAssertEqual(index, results.count - 1, "seed \(seed): results after close") }
            XCTAssertFalse(error.message.isEmpty)
            XCTAssertFalse(error.message.utf8.contains(0x0A), "seed \(seed): LF in \(error.message)")
        }
    }

    func testProtocolLikeNoise() {
        for seed in UInt64(0)..<4000 {
            var generator = SeededGenerator(seed: seed)
            let input = Self.randomInput(using: &generator)
            let reference = parse(input, limits: Self.limits, mode: .allAtOnce)
            checkWellFormed(reference, seed)
            var modes: [FeedMode] = [.randomChunks(seed: seed)]
            if seed % 8 == 0 { modes.append(.byteByByte) }
            for mode in modes {
                XCTAssertEqual(parse(input, limits: Self.limits, mode: mode), reference, "seed \(seed), \(mode)")
            }
        }
    }

    func testUniformRandomBytes() {
        for seed in UInt64(0)..<2000 {
            var generator = SeededGenerator(seed: 90_000 + seed)
            let count = Int.random(in: 0...300, using: &generator)
            var input = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Sprinkle LFs so lines end now and then.
            for _ in 0..<(count / 20) { input[Int.random(in: 0..<count, using: &generator)] = 0x0A }
            let reference = parse(input, limits: Self.limits, mode: .allAtOnce)
            checkWellFormed(reference, seed)
            let chunked = parse(input, limits: Self.limits, mode: .randomChunks(seed: seed))
            XCTAssertEqual(chunked, reference, "seed \(seed)")
        }
    }

    /// A long stream read in small chunks never makes the buffer grow past a bound: consumed bytes are dropped.
    func testLongStreamKeepsTheBufferBounded() {
        var generator = SeededGenerator(seed: 7)
        var parser = CommandParser(limits: Self.limits)
        var commands = 0
        let chunkLimit = 512
        let capacityBound = 2 * (Self.limits.maxLine + Self.limits.maxPayload + 4 + chunkLimit)
        var pending: [UInt8] = []
        for round in 0..<20_000 {
            // A continuous stream cut at random places, so commands straddle reads.
            while pending.count < chunkLimit {
                let count = Int.random(in: 0...64, using: &generator)
                pending += bytes("PUB N.\(round) \(count)\r\n") + Array(repeating: 0x0A, count: count) + bytes("\r\n")
                pending += bytes("SEND N x\nPING\n")
            }
            let size = Int.random(in: 1...chunkLimit, using: &generator)
            parser.withWritableTail(minimumCapacity: chunkLimit) { space in
                pending.withUnsafeBytes { space.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[..<size])) }
                return size
            }
            pending.removeFirst(size)
            while let result = parser.next() {
                guard case .success = result else { return XCTFail("round \(round): \(result)") }
                commands += 1
            }
            XCTAssertLessThanOrEqual(parser.bufferCapacity, capacityBound, "round \(round)")
        }
        XCTAssertGreaterThan(commands, 100_000)
    }
}
