import Glibc
import SubscriptionWire
import XCTest

@testable import SubscriptionState

/// Compaction writes the live state alone, in creation order, through a synced temporary file renamed over the
/// log; a crash before the rename leaves the old log (and a temporary file that the next open removes).
final class StateCompactionTests: StateDirectoryTestCase {
    private let small = CompactionPolicy(factor: 2, minimumBytes: 1024)

    /// Numbers P (plain), R and S (retained), a removed X, and `publications` values to R and S in turn; returns
    /// the store and the values it should hold.
    private func grow(_ store: StateStore, publications: Int) throws -> [ExactName: StoredValue] {
        try store.numberCreated("P", kind: .plain)
        try store.numberCreated("X", kind: .retained)
        try store.numberCreated("R", kind: .retained)
        try store.numberCreated("S", kind: .retained)
        try store.numberCreated("E", kind: .retained)  // retained, never published to
        try store.valuePublished(sampleValue("X", 1))
        try store.numberRemoved("X")
        var values: [ExactName: StoredValue] = [:]
        for i in 0..<publications {
            let number = i % 2 == 0 ? "R" : "S"
            let value = sampleValue(number, UInt64(i / 2 + 1), sender: "pub", info: [.init(key: "i", value: "\(i)")])
            try store.valuePublished(value)
            values[ExactName(number)] = value
        }
        try store.commit()
        return values
    }

    func testCompactionKeepsExactlyTheLiveStateInCreationOrder() throws {
        let (store, _, _) = try openStore(directory.path, compaction: small)
        let values = try grow(store, publications: 200)
        XCTAssertTrue(store.needsCompaction)
        let before = store.logBytes

        let report = try store.compactIfNeeded { values[ExactName($0)] }
        XCTAssertEqual(report, CompactionReport(bytesBefore: before, bytesAfter: store.liveBytes))
        XCTAssertEqual(store.logBytes, store.liveBytes)
        XCTAssertEqual(fileSize(store.logPath), store.liveBytes)
        XCTAssertNil(fileSize(directory.file("subd-state.log.tmp")))
        XCTAssertEqual(store.counters.compactions, 1)

        // Exactly the live records: one created per number, one value per published retained number.
        let bytes = readFile(store.logPath)
        let outcome = try bytes.withUnsafeBytes { try LogReplay.replay($0, path: "log") }
        XCTAssertEqual(outcome.records, 4 + 2)
        let expected = RecoveredState(
            numbers: [
                StoredNumber(name: "P", kind: .plain), StoredNumber(name: "R", kind: .retained),
                StoredNumber(name: "S", kind: .retained), StoredNumber(name: "E", kind: .retained),
            ], values: values)
        XCTAssertEqual(outcome.state, expected)

        // The compacted log goes on, and opens as the same state plus what came after.
        try store.valuePublished(sampleValue("E", 1))
        try store.close()
        var after = expected
        after.values["E"] = sampleValue("E", 1)
        XCTAssertEqual(try openStore(directory.path).1, after)
    }

    func testNoCompactionBelowThePolicy() throws {
        let (store, _, _) = try openStore(directory.path)
        let values = try grow(store, publications: 200)
        XCTAssertFalse(store.needsCompaction, "under 1 MiB")
        XCTAssertNil(try store.compactIfNeeded { values[ExactName($0)] })
        XCTAssertEqual(store.counters.compactions, 0)
    }

    func testTheLogStaysWithinTheFactorUnderEndlessPublishing() throws {
        let (store, _, _) = try openStore(directory.path, compaction: small)
        var values = try grow(store, publications: 0)
        for revision in 1...5000 {
            values["R"] = sampleValue("R", UInt64(revision))
            try store.valuePublished(values["R"]!)
            try store.endOfTurn()
            try store.compactIfNeeded { values[ExactName($0)] }
            XCTAssertLessThanOrEqual(store.logBytes, max(1024, 2 * store.liveBytes))
        }
        XCTAssertGreaterThan(store.counters.compactions, 10)
        try store.close()
        XCTAssertEqual(try openStore(directory.path).1.values, values)
    }

    func testAStrayTemporaryFileIsRemovedAndTheLogKept() throws {
        let (store, _, _) = try openStore(directory.path, compaction: small)
        let values = try grow(store, publications: 20)
        try store.close()
        let log = readFile(store.logPath)
        let whole = try openStore(directory.path).1

        // A crash while the temporary file was being written, and one after it was synced but before the rename
        // (here holding some other state, to show it is not read).
        var other = LogFormat.header()
        LogFormat.appendCreated("OTHER", kind: .plain, to: &other)
        for temporary in [Array(log.prefix(100)), other, []] {
            writeFile(directory.file("subd-state.log.tmp"), temporary)
            let (store, state, report) = try openStore(directory.path)
            XCTAssertEqual(state, whole)
            XCTAssertEqual(state.values, values)
            XCTAssertTrue(report.removedTemporaryFile)
            XCTAssertTrue(report.description.hasSuffix("; removed an unfinished compaction's temporary file"))
            XCTAssertNil(fileSize(directory.file("subd-state.log.tmp")))
            XCTAssertEqual(readFile(store.logPath), log)
            try store.close()
        }
    }

    func testACompactionThatCannotBeWrittenLeavesTheOldLogInUse() throws {
        let disk = CountingDisk()
        let (store, _, _) = try openStore(directory.path, compaction: small, disk: disk)
        var values = try grow(store, publications: 200)
        let log = readFile(store.logPath)
        disk.writeBudget = 100
        let error = stateError { try store.compactIfNeeded { values[ExactName($0)] } }
        XCTAssertEqual(error?.description, "write \(directory.path)/subd-state.log.tmp: No space left on device")
        XCTAssertNil(fileSize(directory.file("subd-state.log.tmp")))
        XCTAssertEqual(readFile(store.logPath), log)

        disk.writeBudget = nil
        values["R"] = sampleValue("R", 1000)
        try store.valuePublished(values["R"]!)
        try store.commit()
        XCTAssertNotNil(try store.compactIfNeeded { values[ExactName($0)] })
        try store.close()
        XCTAssertEqual(try openStore(directory.path).1.values, values)
    }

    func testACompactionSyncsTheNewLogAndTheDirectory() throws {
        let disk = CountingDisk()
        let (store, _, _) = try openStore(directory.path, compaction: small, disk: disk)
        let values = try grow(store, publications: 200)
        disk.reset()
        try store.compact { values[ExactName($0)] }
        XCTAssertEqual(disk.fileSyncs, 1, "the temporary file; the log had nothing uncommitted")
        XCTAssertEqual(disk.directorySyncs, 1, "after the rename")
        XCTAssertFalse(store.hasUncommittedRecords)
    }
}
