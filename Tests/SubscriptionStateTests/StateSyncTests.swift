import XCTest

@testable import SubscriptionState

/// The group-commit rule, counted through the disk's calls rather than timed: a number's change is written and
/// synced before the call returns; a value costs no system call until the turn ends; a commit makes at most one
/// fdatasync, and none when nothing was appended.
final class StateSyncTests: StateDirectoryTestCase {
    private func open(_ policy: FsyncPolicy = .everyTurn) throws -> StateStore {
        let (store, _, _) = try openStore(directory.path, policy: policy, disk: disk)
        disk.reset()
        return store
    }

    func testANewLogSyncsItselfAndItsDirectoryBeforeOpenReturns() throws {
        _ = try openStore(directory.path, disk: disk)
        XCTAssertEqual(disk.fileSyncs, 1)
        XCTAssertEqual(disk.directorySyncs, 1)
    }

    func testReopeningAWholeLogWritesAndSyncsNothing() throws {
        try openStore(directory.path, disk: disk).0.close()
        disk.reset()
        let (store, _, _) = try openStore(directory.path, disk: disk)
        try store.close()
        XCTAssertEqual(disk.writes, 0)
        XCTAssertEqual(disk.syncs, 0)
    }

    func testEveryCreateAndRemoveIsWrittenAndSyncedOnceBeforeItReturns() throws {
        let store = try open()
        for i in 0..<5 {
            try store.numberCreated("N\(i)", kind: .plain)
            XCTAssertEqual(disk.writes, 2 * i + 1)
            XCTAssertEqual(disk.fileSyncs, 2 * i + 1)
            try store.numberRemoved("N\(i)")
            XCTAssertEqual(disk.writes, 2 * i + 2)
            XCTAssertEqual(disk.fileSyncs, 2 * i + 2)
        }
        XCTAssertEqual(disk.directorySyncs, 0)
        XCTAssertFalse(store.hasUncommittedRecords)
        try store.commit()
        XCTAssertEqual(disk.syncs, 10, "nothing left to commit")
    }

    func testPublishingMakesNoSystemCallAndOneCommitWritesAndSyncsOnce() throws {
        let store = try open()
        try store.numberCreated("R", kind: .retained)
        disk.reset()
        for revision in 1...100 { try store.valuePublished(sampleValue("R", UInt64(revision))) }
        XCTAssertEqual(disk.writes, 0)
        XCTAssertEqual(disk.syncs, 0)
        XCTAssertTrue(store.hasUncommittedRecords)

        try store.commit()
        XCTAssertEqual(disk.writes, 1)
        XCTAssertEqual(disk.fileSyncs, 1)
        XCTAssertFalse(store.hasUncommittedRecords)

        try store.commit()
        try store.commit()
        XCTAssertEqual(disk.writes, 1, "nothing appended, nothing written")
        XCTAssertEqual(disk.fileSyncs, 1, "nothing appended, no sync")

        try store.valuePublished(sampleValue("R", 101))
        try store.commit()
        XCTAssertEqual(disk.writes, 2)
        XCTAssertEqual(disk.fileSyncs, 2)
    }

    func testFlushWritesWithoutSyncingAndTheNextCommitOnlySyncs() throws {
        let store = try open()
        try store.numberCreated("R", kind: .retained)
        disk.reset()
        try store.valuePublished(sampleValue("R", 1))
        try store.flush()
        XCTAssertEqual(disk.writes, 1)
        XCTAssertEqual(disk.syncs, 0)
        try store.flush()
        XCTAssertEqual(disk.writes, 1, "nothing buffered")
        XCTAssertTrue(store.hasUncommittedRecords, "written, not synced")
        try store.commit()
        XCTAssertEqual(disk.writes, 1)
        XCTAssertEqual(disk.fileSyncs, 1)
        try store.commit()
        XCTAssertEqual(disk.fileSyncs, 1)
    }

    func testEndOfTurnSyncsUnderEveryTurnAndOnlyWritesUnderEverySecond() throws {
        for policy in FsyncPolicy.allCases {
            let directory = TemporaryDirectory()
            defer { directory.remove() }
            let disk = CountingDisk()
            let (store, _, _) = try openStore(directory.path, policy: policy, disk: disk)
            try store.numberCreated("R", kind: .retained)
            disk.reset()
            for turn in 1...10 {
                try store.valuePublished(sampleValue("R", UInt64(2 * turn - 1)))
                try store.valuePublished(sampleValue("R", UInt64(2 * turn)))
                try store.endOfTurn()
            }
            try store.endOfTurn()  // a turn with nothing published
            XCTAssertEqual(disk.writes, 10, "\(policy)")
            XCTAssertEqual(disk.fileSyncs, policy == .everyTurn ? 10 : 0, "\(policy)")
            try store.commit()  // the everysec timer
            XCTAssertEqual(disk.fileSyncs, policy == .everyTurn ? 10 : 1, "\(policy)")
        }
    }

    func testAChangeOfANumberCarriesTheBufferedValuesInItsOneWriteAndSync() throws {
        let store = try open()
        try store.numberCreated("R", kind: .retained)
        disk.reset()
        for revision in 1...10 { try store.valuePublished(sampleValue("R", UInt64(revision))) }
        try store.numberCreated("B", kind: .plain)
        XCTAssertEqual(disk.writes, 1)
        XCTAssertEqual(disk.fileSyncs, 1)
        try store.commit()
        XCTAssertEqual(disk.syncs, 1, "the values went with the create")
        try store.close()
        XCTAssertEqual(try openStore(directory.path).1.values["R"]?.revision, 10)
    }

    func testCloseCommitsWhatIsBuffered() throws {
        let store = try open()
        try store.numberCreated("R", kind: .retained)
        try store.valuePublished(sampleValue("R", 1))
        disk.reset()
        try store.close()
        XCTAssertEqual(disk.writes, 1)
        XCTAssertEqual(disk.fileSyncs, 1)
        XCTAssertEqual(try openStore(directory.path).1.values["R"], sampleValue("R", 1))
    }

    func testTheCountersSayWhatWasDoneSinceTheOpen() throws {
        let store = try open()
        XCTAssertEqual(
            store.counters, StateCounters(records: 0, bytesWritten: 16, syncs: 2, compactions: 0), "a new log")
        try store.numberCreated("R", kind: .retained)
        try store.valuePublished(sampleValue("R", 1))
        try store.commit()
        XCTAssertEqual(
            store.counters, StateCounters(records: 2, bytesWritten: store.logBytes, syncs: 4, compactions: 0))
    }

    func testThePolicyIsNamedByItsConfigurationValue() {
        XCTAssertEqual(FsyncPolicy.default, .everyTurn)
        XCTAssertEqual(FsyncPolicy(configurationValue: "turn"), .everyTurn)
        XCTAssertEqual(FsyncPolicy(configurationValue: "everysec"), .everySecond)
        XCTAssertNil(FsyncPolicy(configurationValue: "always"))
        XCTAssertEqual(FsyncPolicy.everySecond.configurationValue, "everysec")
    }
}
