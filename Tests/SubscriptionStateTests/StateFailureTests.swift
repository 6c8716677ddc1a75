import Glibc
import XCTest

@testable import SubscriptionState

/// A full disk refuses the change that needed the space, leaves no half record in the log, and the store goes on
/// once there is room; a failed sync stops the store, since nothing after it can be promised, and cuts the records it
/// was to confirm back off the log (unless they were answered already, under `everysec`).
final class StateFailureTests: StateDirectoryTestCase {
    func testAFullDiskRefusesTheCreateAndLeavesNoPartOfIt() throws {
        let (store, _, _) = try openStore(directory.path, disk: disk)
        try store.numberCreated("A", kind: .plain)
        let size = fileSize(store.logPath)
        disk.writeBudget = 5  // five bytes of the record fit, then ENOSPC
        let error = stateError { try store.numberCreated("B", kind: .retained) }
        XCTAssertEqual(error, .system(operation: "write", path: store.logPath, errno: ENOSPC))
        XCTAssertEqual(error?.description, "write \(store.logPath): No space left on device")
        XCTAssertEqual(fileSize(store.logPath), size, "the five bytes were cut off again")
        XCTAssertEqual(store.numberCount, 1)

        disk.writeBudget = nil
        try store.numberCreated("C", kind: .plain)
        try store.close()
        let (_, state, report) = try openStore(directory.path)
        XCTAssertEqual(state.numbers.map(\.name), ["A", "C"])
        XCTAssertNil(report.truncation)
    }

    func testAFullDiskRefusesTheRemoveAndTheNumberStays() throws {
        let (store, _, _) = try openStore(directory.path, disk: disk)
        try store.numberCreated("R", kind: .retained)
        try store.valuePublished(sampleValue("R", 1))
        disk.writeBudget = 0
        XCTAssertNotNil(stateError { try store.numberRemoved("R") })
        disk.writeBudget = nil
        try store.valuePublished(sampleValue("R", 2))  // still there, still retained, at revision 1
        try store.close()
        let (_, state, _) = try openStore(directory.path)
        XCTAssertEqual(state.numbers, [StoredNumber(name: "R", kind: .retained)])
        XCTAssertEqual(state.values["R"], sampleValue("R", 2))
    }

    func testBufferedValuesSurviveAFailedCommitAndAFailedCreateAndGoOutWithTheNextWrite() throws {
        let (store, _, _) = try openStore(directory.path, disk: disk)
        try store.numberCreated("R", kind: .retained)
        let size = fileSize(store.logPath)
        try store.valuePublished(sampleValue("R", 1))
        try store.valuePublished(sampleValue("R", 2))
        disk.writeBudget = 30
        XCTAssertNotNil(stateError { try store.commit() })
        XCTAssertEqual(fileSize(store.logPath), size)
        disk.writeBudget = 40
        XCTAssertNotNil(stateError { try store.numberCreated("B", kind: .plain) })
        XCTAssertEqual(fileSize(store.logPath), size)
        XCTAssertTrue(store.hasUncommittedRecords)

        disk.writeBudget = nil
        try store.commit()
        try store.close()
        let (_, state, _) = try openStore(directory.path)
        XCTAssertEqual(state.numbers.map(\.name), ["R"], "B was refused")
        XCTAssertEqual(state.values["R"], sampleValue("R", 2))
    }

    func testAFailedSyncStopsTheStore() throws {
        let (store, _, _) = try openStore(directory.path, disk: disk)
        try store.numberCreated("R", kind: .retained)
        try store.valuePublished(sampleValue("R", 1))
        disk.syncError = EIO
        let error = stateError { try store.commit() }
        XCTAssertEqual(error?.description, "fdatasync \(store.logPath): Input/output error")
        disk.syncError = nil
        let next = stateError { try store.numberCreated("B", kind: .plain) }
        XCTAssertEqual(next, .unusable(cause: "fdatasync \(store.logPath): Input/output error"))
        XCTAssertEqual(
            next?.description,
            "the state store stopped after a failure it cannot undo (fdatasync \(store.logPath): Input/output error); "
                + "restart to recover from disk")
        XCTAssertNotNil(stateError { try store.valuePublished(sampleValue("R", 2)) })
        XCTAssertNotNil(stateError { try store.commit() })
    }

    func testAFailedSyncOfACreateIsThrownSoItIsNotAcknowledged() throws {
        let (store, _, _) = try openStore(directory.path, disk: disk)
        disk.syncError = EIO
        XCTAssertEqual(
            stateError { try store.numberCreated("A", kind: .plain) },
            .system(operation: "fdatasync", path: store.logPath, errno: EIO))
    }

    func testANewLogThatCannotBeWrittenLeavesNoFileBehind() throws {
        disk.writeBudget = 3
        let error = stateError { try openStore(directory.path, disk: disk) }
        XCTAssertEqual(error?.description, "write \(directory.path)/subd-state.log.tmp: No space left on device")
        XCTAssertNil(fileSize(directory.file("subd-state.log")))
        XCTAssertNil(fileSize(directory.file("subd-state.log.tmp")))
        disk.writeBudget = nil
        XCTAssertTrue(try openStore(directory.path, disk: disk).2.created)
    }

    func testAFailedEndOfTurnSyncCutsTheTurnsValuesBackOffTheLog() throws {
        let (store, _, _) = try openStore(directory.path, disk: disk)
        try store.numberCreated("R", kind: .retained)
        try store.valuePublished(sampleValue("R", 1))
        try store.endOfTurn()
        let saved = fileSize(store.logPath)
        try store.valuePublished(sampleValue("R", 2))
        try store.valuePublished(sampleValue("R", 3))
        disk.syncError = EIO
        disk.failingSyncs = 1
        XCTAssertEqual(
            stateError { try store.endOfTurn() }, .system(operation: "fdatasync", path: store.logPath, errno: EIO))
        XCTAssertEqual(disk.truncates, 1)
        XCTAssertEqual(fileSize(store.logPath), saved, "the turn's two values were cut back off")
        XCTAssertFalse(store.isUsable)
        XCTAssertFalse(store.hasUncertainTail)
        XCTAssertFalse(store.needsEndOfTurn, "a stopped store has nothing more to do at the end of a turn")
        XCTAssertNotNil(stateError { try store.valuePublished(sampleValue("R", 4)) })
        _ = try? store.close()  // throws (the store stopped), and lets go of the directory
        let (_, state, report) = try openStore(directory.path)
        XCTAssertEqual(state.values["R"], sampleValue("R", 1), "what was answered +OK, and nothing refused")
        XCTAssertNil(report.truncation)
    }

    func testWhenTheCutFailsTooTheTailIsUncertain() throws {
        let (store, _, _) = try openStore(directory.path, disk: disk)
        try store.numberCreated("R", kind: .retained)
        try store.valuePublished(sampleValue("R", 1))
        disk.syncError = EIO
        disk.truncateError = EROFS
        XCTAssertNotNil(stateError { try store.endOfTurn() })
        XCTAssertTrue(store.hasUncertainTail)
        XCTAssertEqual(
            stateError { try store.commit() },
            .unusable(
                cause: "fdatasync \(store.logPath): Input/output error, then ftruncate \(store.logPath): "
                    + "Read-only file system"))
    }

    func testAFailedSyncOfACreateCutsOnlyItsOwnRecordsUnderEverySecond() throws {
        let (store, _, _) = try openStore(directory.path, policy: .everySecond, disk: disk)
        try store.numberCreated("R", kind: .retained)
        try store.valuePublished(sampleValue("R", 1))
        try store.endOfTurn()  // written, answered, not synced
        let answered = fileSize(store.logPath)
        disk.syncError = EIO
        disk.failingSyncs = 1
        XCTAssertNotNil(stateError { try store.numberCreated("B", kind: .plain) })
        XCTAssertEqual(fileSize(store.logPath), answered, "B's record is cut off; R's answered value stays")
        _ = try? store.close()  // throws (the store stopped), and lets go of the directory
        let (_, state, _) = try openStore(directory.path)
        XCTAssertEqual(state.numbers.map(\.name), ["R"])
        XCTAssertEqual(state.values["R"], sampleValue("R", 1))
    }

    func testTheOnceASecondSyncCutsNothingBackUnderEverySecond() throws {
        let (store, _, _) = try openStore(directory.path, policy: .everySecond, disk: disk)
        try store.numberCreated("R", kind: .retained)
        try store.valuePublished(sampleValue("R", 1))
        try store.endOfTurn()
        let answered = fileSize(store.logPath)
        disk.syncError = EIO
        XCTAssertNotNil(stateError { try store.commit() })
        XCTAssertEqual(disk.truncates, 0, "the value was answered when it was written: it is not taken back")
        XCTAssertEqual(fileSize(store.logPath), answered)
        XCTAssertFalse(store.isUsable)
    }

    func testDiscardedValuesAreForgottenSoTheNextFollowsTheLastSavedOne() throws {
        let (store, _, _) = try openStore(directory.path, disk: disk)
        try store.numberCreated("R", kind: .retained)
        try store.valuePublished(sampleValue("R", 1))
        try store.endOfTurn()
        try store.valuePublished(sampleValue("R", 2))
        try store.valuePublished(sampleValue("R", 3))
        XCTAssertEqual(store.lastRevision(of: "R"), 3)
        disk.writeBudget = 0
        XCTAssertNotNil(stateError { try store.endOfTurn() })
        XCTAssertTrue(store.isUsable, "a write that failed is undone, and the next change tries again")
        XCTAssertEqual(disk.truncates, 0, "nothing reached the file, so nothing is cut")
        store.discardUnwritten()
        XCTAssertEqual(store.lastRevision(of: "R"), 1)
        XCTAssertFalse(store.needsEndOfTurn)
        disk.writeBudget = nil
        let retry = StoredValue(number: "R", revision: 2, payload: Array("after the disk had room".utf8))
        try store.valuePublished(retry)
        try store.endOfTurn()
        XCTAssertNil(store.lastRevision(of: "PLAIN"))
        try store.close()
        let (_, state, _) = try openStore(directory.path)
        XCTAssertEqual(state.values["R"], retry)
    }

    func testAWriteThatCannotBeCutBackStopsTheStoreWithAnUncertainTail() throws {
        let (store, _, _) = try openStore(directory.path, disk: disk)
        try store.numberCreated("R", kind: .retained)
        try store.valuePublished(sampleValue("R", 1))
        disk.writeBudget = 10
        disk.truncateError = EIO
        XCTAssertNotNil(stateError { try store.endOfTurn() })
        XCTAssertFalse(store.isUsable)
        XCTAssertTrue(store.hasUncertainTail)
    }

    func testADiscardKeepsTheIndexOfValuesThatWereCurrentAlreadySoACompactionWritesThem() throws {
        let (store, _, _) = try openStore(directory.path, disk: disk)
        try store.numberCreated("SHARED", kind: .retained)
        try store.numberCreated("LOCAL", kind: .retained)
        let shared = sampleValue("SHARED", 7)  // made current by its caller before it is saved (a cluster's value)
        try store.valuePublished(
            shared.number, revision: 7, sender: nil, info: [], payload: shared.payload[...], staged: false)
        let local = sampleValue("LOCAL", 1)
        try store.valuePublished(
            local.number, revision: 1, sender: nil, info: [], payload: local.payload[...], staged: true)
        disk.writeBudget = 0
        XCTAssertNotNil(stateError { try store.endOfTurn() })
        store.discardUnwritten()
        XCTAssertEqual(store.lastRevision(of: "SHARED"), 7, "still what is current")
        XCTAssertEqual(store.lastRevision(of: "LOCAL"), 0, "taken back")
        disk.writeBudget = nil
        try store.compact { $0 == "SHARED" ? shared : nil }
        try store.close()
        let (_, state, _) = try openStore(directory.path)
        XCTAssertEqual(state.values["SHARED"], shared, "the compaction wrote it")
        XCTAssertNil(state.values["LOCAL"])
    }
}
