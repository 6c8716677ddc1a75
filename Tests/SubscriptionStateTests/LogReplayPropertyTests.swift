import SubscriptionWire
import TestSupport
import XCTest

@testable import SubscriptionState

/// Properties of replay over seeded random logs of every record type. Any record may have been acknowledged (a
/// write holds one record or a turn's values, and each is acknowledged once synced), so whatever a crash leaves,
/// replay must give the state after the whole records before the crash's first spoiled byte, never an error, never
/// a record made of cut bytes:
///
/// - the log cut at every byte opens as the records wholly before the cut;
/// - the log zero-filled from every byte to its end (blocks the disk never wrote) opens as the records wholly
///   before the zeros;
/// - a byte changed in any record but the last is damage at that record's offset; in the last, a torn write.
final class LogReplayPropertyTests: XCTestCase {
    /// A random log: its bytes, `boundaries[i]` its size after `i` records, `states[i]` the state they make.
    private struct RandomLog {
        var bytes = LogFormat.header()
        var boundaries = [LogFormat.headerSize]
        var states = [RecoveredState()]

        /// How many records lie wholly in the first `count` bytes of `damaged`, which differs from ``bytes`` at
        /// `firstChange` at the earliest.
        func wholeRecords(in damaged: [UInt8], count: Int, firstChange: Int) -> Int {
            boundaries.lastIndex { end in
                end <= count
                    && (end <= firstChange || damaged[firstChange..<end].elementsEqual(bytes[firstChange..<end]))
            }!
        }
    }

    private func makeLog(seed: UInt64, records: Int) -> RandomLog {
        var random = SeededGenerator(seed: seed)
        var log = RandomLog()
        var state = RecoveredState()
        var revisions: [ExactName: UInt64] = [:]
        // Two spellings of "café" (NFC and NFD): equal as Swift Strings, two numbers as bytes.
        let names = ["A", "B.c", "Ünï", "R0", "R1", "$SYS.x", "caf\u{E9}", "cafe\u{301}"]
        while log.states.count <= records {
            let name = names.randomElement(using: &random)!
            let kind = state.kind(of: name)
            switch (kind, Int.random(in: 0..<10, using: &random)) {
            case (nil, _):
                let kind: StoredNumber.Kind = Bool.random(using: &random) ? .retained : .plain
                LogFormat.appendCreated(name, kind: kind, to: &log.bytes)
                state.numbers.append(StoredNumber(name: name, kind: kind))
                revisions[ExactName(name)] = 0
            case (_?, 0..<2):
                LogFormat.appendRemoved(name, to: &log.bytes)
                state.numbers.removeAll { ExactName($0.name) == ExactName(name) }
                state.values[ExactName(name)] = nil
            case (.retained?, _):
                let revision = revisions[ExactName(name)]! + UInt64.random(in: 1...1000, using: &random)
                let value = StoredValue(
                    number: name, revision: revision, sender: Bool.random(using: &random) ? "pub" : nil,
                    info: (0..<Int.random(in: 0...2, using: &random)).map { InfoPair(key: "k\($0)", value: "v") },
                    payload: (0..<Int.random(in: 0...80, using: &random)).map { _ in
                        // Zeros are common in payloads, and make zero-filled blocks harder to tell apart.
                        Bool.random(using: &random) ? 0 : UInt8.random(in: 0...255, using: &random)
                    })
                LogFormat.appendValue(value, to: &log.bytes)
                state.values[ExactName(name)] = value
                revisions[ExactName(name)] = revision
            default:
                continue
            }
            log.boundaries.append(log.bytes.count)
            log.states.append(state)
        }
        return log
    }

    private func replay(_ bytes: [UInt8]) throws -> LogReplay.Outcome {
        try bytes.withUnsafeBytes { try LogReplay.replay($0, path: "log") }
    }

    private let seeds: [UInt64] = [11, 12, 13, 14]

    func testTheWholeLogReplaysToTheLastState() throws {
        for seed in seeds {
            let log = makeLog(seed: seed, records: 40)
            let outcome = try replay(log.bytes)
            XCTAssertEqual(outcome.state, log.states.last, "seed \(seed)")
            XCTAssertEqual(outcome.records, 40)
            XCTAssertEqual(outcome.validLength, log.bytes.count)
            XCTAssertNil(outcome.tornReason)
        }
    }

    func testACutAtEveryByteReplaysToThePrefixOfWholeRecords() throws {
        for seed in seeds {
            let log = makeLog(seed: seed, records: 40)
            for cut in LogFormat.headerSize...log.bytes.count {
                let whole = log.boundaries.lastIndex { $0 <= cut }!
                let outcome = try replay(Array(log.bytes[..<cut]))
                XCTAssertEqual(outcome.state, log.states[whole], "seed \(seed), cut at \(cut)")
                XCTAssertEqual(outcome.records, whole, "seed \(seed), cut at \(cut)")
                XCTAssertEqual(outcome.validLength, log.boundaries[whole], "seed \(seed), cut at \(cut)")
                XCTAssertEqual(outcome.tornReason == nil, cut == log.boundaries[whole], "seed \(seed), cut at \(cut)")
            }
        }
    }

    func testZerosFromEveryByteToTheEndReplayToThePrefixOfWholeRecords() throws {
        for seed in seeds {
            let log = makeLog(seed: seed, records: 40)
            for start in LogFormat.headerSize..<log.bytes.count {
                var damaged = log.bytes
                for i in start..<damaged.count { damaged[i] = 0 }
                let whole = log.wholeRecords(in: damaged, count: damaged.count, firstChange: start)
                let outcome = try replay(damaged)
                XCTAssertEqual(outcome.state, log.states[whole], "seed \(seed), zeros from \(start)")
                XCTAssertEqual(outcome.validLength, log.boundaries[whole], "seed \(seed), zeros from \(start)")
                XCTAssertEqual(
                    outcome.tornReason == nil, whole == log.states.count - 1, "seed \(seed), zeros from \(start)")
            }
        }
    }

    func testACutThenZerosReplaysToThePrefixOfWholeRecords() throws {
        // The file's size reached further than its data: the cut bytes, then zeros up to a random size.
        var random = SeededGenerator(seed: 99)
        for seed in seeds {
            let log = makeLog(seed: seed, records: 40)
            for _ in 0..<300 {
                let cut = Int.random(in: LogFormat.headerSize...log.bytes.count, using: &random)
                let size = Int.random(in: cut...log.bytes.count + 64, using: &random)
                let damaged = Array(log.bytes[..<cut]) + [UInt8](repeating: 0, count: size - cut)
                let whole = log.wholeRecords(in: damaged, count: size, firstChange: cut)
                let outcome = try replay(damaged)
                XCTAssertEqual(outcome.state, log.states[whole], "seed \(seed), cut at \(cut), size \(size)")
                XCTAssertEqual(outcome.validLength, log.boundaries[whole], "seed \(seed), cut at \(cut), size \(size)")
            }
        }
    }

    func testAChangedByteIsDamageAtItsRecordUnlessTheRecordIsTheLast() throws {
        var random = SeededGenerator(seed: 7)
        for seed in seeds {
            let log = makeLog(seed: seed, records: 40)
            for record in 0..<40 {
                let start = log.boundaries[record]
                let end = log.boundaries[record + 1]
                for _ in 0..<4 {
                    var damaged = log.bytes
                    damaged[Int.random(in: start..<end, using: &random)] ^= UInt8.random(in: 1...255, using: &random)
                    if record < 39 {
                        XCTAssertThrowsError(try replay(damaged), "seed \(seed), record \(record)") { error in
                            guard case .corrupt("log", start, .record, _)? = error as? StateError else {
                                return XCTFail("seed \(seed), record \(record): \(error)")
                            }
                        }
                    } else {
                        let outcome = try replay(damaged)
                        XCTAssertEqual(outcome.state, log.states[39], "seed \(seed)")
                        XCTAssertEqual(outcome.validLength, start, "seed \(seed)")
                        XCTAssertNotNil(outcome.tornReason, "seed \(seed)")
                    }
                }
            }
        }
    }
}
