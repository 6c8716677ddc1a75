import Glibc
import SubscriptionWire
import TestSupport
import XCTest

@testable import SubscriptionState

/// Random operations against a model: creates and removes from a small pool of names (so names come back, with
/// either kind), publications, commits, flushes, compactions, writes that fail for want of space, crashes (the
/// store dropped without a commit: only what was written survives) and clean reopens. After every reopen the
/// recovered state is exactly the model's: all of it after a close, what was written before a crash.
final class StateModelTests: XCTestCase {
    /// The state as the caller sees it: numbers in creation order and the values.
    private struct Model: Equatable {
        var numbers: [StoredNumber] = []
        var values: [ExactName: StoredValue] = [:]
        var revisions: [ExactName: UInt64] = [:]

        var state: RecoveredState { RecoveredState(numbers: numbers, values: values) }
        func kind(_ name: String) -> StoredNumber.Kind? {
            numbers.first { ExactName($0.name) == ExactName(name) }?.kind
        }
    }

    func testRandomOperationsRecoverAsTheModel() throws {
        for seed: UInt64 in [1, 2, 3, 4, 5, 6] {
            try run(seed: seed, operations: 1500)
        }
    }

    private func run(seed: UInt64, operations: Int) throws {
        var random = SeededGenerator(seed: seed)
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let disk = CountingDisk()
        let policy = CompactionPolicy(factor: 2, minimumBytes: 2048)
        // Two spellings of "café" (NFC and NFD): equal as Swift Strings, two numbers as bytes.
        let names = (0..<8).map { "N\($0).x" } + ["Ünï", "$SYS.no", "caf\u{E9}", "cafe\u{301}"]
        var model = Model()
        /// The model as of the last write that reached the file: what a crash leaves.
        var written = Model()
        var store: StateStore! = try StateStore.open(directory: directory.path, compaction: policy, disk: disk).0
        var counts: [String: Int] = [:]

        func check(_ state: RecoveredState, _ expected: Model, _ what: String, _ step: Int) {
            XCTAssertEqual(state, expected.state, "seed \(seed), step \(step): after \(what)")
        }
        /// Runs a call that writes; on success the model changes. Now and then the disk is full for it: then it
        /// throws ENOSPC and the model stays. Either way, once nothing is left buffered the file holds the model.
        func writing(writesAll: Bool = true, _ body: () throws -> Void, success: () -> Void = {}) throws {
            if Int.random(in: 0..<20, using: &random) == 0 { disk.writeBudget = Int.random(in: 0..<40, using: &random) }
            defer { disk.writeBudget = nil }
            do {
                try body()
                success()
                if writesAll {
                    XCTAssertEqual(store.logBytes, store.writtenBytes, "seed \(seed): a write left records buffered")
                }
            } catch let error as StateError {
                guard case .system("write", _, ENOSPC, _) = error else { throw error }
                counts["refused", default: 0] += 1
            }
            if store.logBytes == store.writtenBytes { written = model }
        }

        for step in 0..<operations {
            let name = names.randomElement(using: &random)!
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<15:
                guard model.kind(name) == nil else { continue }
                let kind: StoredNumber.Kind = Bool.random(using: &random) ? .retained : .plain
                try writing({ try store.numberCreated(name, kind: kind) }) {
                    model.numbers.append(StoredNumber(name: name, kind: kind))
                    model.revisions[ExactName(name)] = 0
                }
                counts["create", default: 0] += 1
            case 15..<22:
                guard model.kind(name) != nil else { continue }
                try writing({ try store.numberRemoved(name) }) {
                    model.numbers.removeAll { ExactName($0.name) == ExactName(name) }
                    model.values[ExactName(name)] = nil
                    model.revisions[ExactName(name)] = nil
                }
                counts["remove", default: 0] += 1
            case 22..<75:
                guard model.kind(name) == .retained else { continue }
                let revision = model.revisions[ExactName(name)]! + UInt64.random(in: 1...3, using: &random)
                let value = StoredValue(
                    number: name, revision: revision,
                    sender: Bool.random(using: &random) ? "client-\(revision % 5)" : nil,
                    info: (0..<Int.random(in: 0...3, using: &random)).map {
                        InfoPair(key: "k\($0)", value: String(repeating: "v", count: $0 + 1))
                    },
                    payload: (0..<Int.random(in: 0...300, using: &random)).map { _ in
                        UInt8.random(in: 0...255, using: &random)
                    })
                try store.valuePublished(value)
                model.values[ExactName(name)] = value
                model.revisions[ExactName(name)] = revision
                counts["publish", default: 0] += 1
            case 75..<84:
                try writing { try store.commit() }
                counts["commit", default: 0] += 1
            case 84..<90:
                try writing { try store.flush() }
                counts["flush", default: 0] += 1
            case 90..<94:
                let values = model.values
                try writing(writesAll: false) { try store.compactIfNeeded { values[ExactName($0)] } }
                counts["compact", default: 0] += 1
            case 94..<97:
                // kill -9: what was written is there, what was buffered is gone.
                store = nil
                let (reopened, recovered, report) = try StateStore.open(
                    directory: directory.path, compaction: policy, disk: disk)
                store = reopened
                check(recovered, written, "a crash", step)
                XCTAssertNil(report.truncation)
                model = written
                counts["crash", default: 0] += 1
            default:
                try store.close()
                let (reopened, recovered, _) = try StateStore.open(
                    directory: directory.path, compaction: policy, disk: disk)
                store = reopened
                check(recovered, model, "a close", step)
                written = model
                counts["reopen", default: 0] += 1
            }
        }
        try store.close()
        check(try StateStore.open(directory: directory.path).1, model, "the last close", operations)
        print("model test, seed \(seed): \(counts.sorted { $0.key < $1.key })")
    }
}
