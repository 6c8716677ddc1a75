import Glibc
import XCTest

@testable import SubscriptionState

/// A full disk refuses the change that needed the space, leaves no half record in the log, and the store goes on
/// once there is room; a failed sync stops the store, since nothing after it can be promised.
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
}
