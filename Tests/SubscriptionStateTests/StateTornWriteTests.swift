import SubscriptionWire
import XCTest

@testable import SubscriptionState

/// A crash can cut the log's last write at any byte. Whatever byte it stops at, the log opens: with every record
/// that was whole, never an error, never a record made of the cut bytes; the cut is reported and the file shortened
/// to the last whole record.
final class StateTornWriteTests: StateDirectoryTestCase {
    /// A log of a few records of every type; `boundaries[i]` is its size after `i` records and `states[i]` the
    /// state they make.
    private func makeLog() throws -> (bytes: [UInt8], boundaries: [Int], states: [RecoveredState]) {
        let source = directory.file("source")
        let (store, _, _) = try openStore(source)
        var boundaries = [store.logBytes]
        var states = [RecoveredState()]
        var state = RecoveredState()
        func step(_ change: () throws -> Void, _ apply: (inout RecoveredState) -> Void) throws {
            try change()
            try store.commit()
            apply(&state)
            boundaries.append(store.logBytes)
            states.append(state)
        }
        let r2 = StoredValue(
            number: "R", revision: 2, sender: "lab", info: [InfoPair(key: "unit", value: "EUR")],
            payload: Array(repeating: 0x5A, count: 100))
        try step({ try store.numberCreated("A", kind: .plain) }) {
            $0.numbers.append(StoredNumber(name: "A", kind: .plain))
        }
        try step({ try store.numberCreated("R", kind: .retained) }) {
            $0.numbers.append(StoredNumber(name: "R", kind: .retained))
        }
        try step({ try store.valuePublished(sampleValue("R", 1)) }) { $0.values["R"] = sampleValue("R", 1) }
        try step({ try store.valuePublished(r2) }) { $0.values["R"] = r2 }
        try step({ try store.numberRemoved("A") }) { $0.numbers.removeFirst() }
        try step({ try store.numberCreated("S", kind: .retained) }) {
            $0.numbers.append(StoredNumber(name: "S", kind: .retained))
        }
        try step({ try store.valuePublished(sampleValue("S", 1, sender: "me")) }) {
            $0.values["S"] = sampleValue("S", 1, sender: "me")
        }
        try step({ try store.valuePublished(StoredValue(number: "R", revision: 3, payload: [])) }) {
            $0.values["R"] = StoredValue(number: "R", revision: 3, payload: [])
        }
        try store.close()
        let bytes = readFile(store.logPath)
        XCTAssertEqual(bytes.count, boundaries.last)
        return (bytes, boundaries, states)
    }

    func testEveryCutOfTheLogRecoversExactlyTheWholeRecordsBeforeIt() throws {
        let (bytes, boundaries, states) = try makeLog()
        for cut in LogFormat.headerSize...bytes.count {
            let path = directory.file("cut-\(cut)")
            mkdir(path, 0o700)
            writeFile(path + "/subd-state.log", Array(bytes[..<cut]))
            let whole = boundaries.lastIndex { $0 <= cut }!
            let (store, state, report) = try openStore(path)
            XCTAssertEqual(state, states[whole], "cut at \(cut)")
            XCTAssertEqual(report.records, whole, "cut at \(cut)")
            XCTAssertEqual(fileSize(store.logPath), boundaries[whole], "cut at \(cut)")
            if cut == boundaries[whole] {
                XCTAssertNil(report.truncation, "cut at \(cut)")
            } else {
                XCTAssertEqual(report.truncation?.offset, boundaries[whole], "cut at \(cut)")
                XCTAssertEqual(report.truncation?.bytes, cut - boundaries[whole], "cut at \(cut)")
                XCTAssertTrue(report.description.contains("cut a write torn by a crash at offset \(boundaries[whole])"))
            }
            // The recovered log goes on: a new record after the cut, and the next open sees both.
            try store.numberCreated("NEW", kind: .plain)
            try store.close()
            let (_, again, reopened) = try openStore(path)
            XCTAssertNil(reopened.truncation, "cut at \(cut)")
            XCTAssertEqual(again.numbers, states[whole].numbers + [StoredNumber(name: "NEW", kind: .plain)])
            XCTAssertEqual(again.values, states[whole].values)
        }
    }

    func testACutInsideTheHeaderIsDamageAndTheFileIsKept() throws {
        let (bytes, _, _) = try makeLog()
        for cut in 0..<LogFormat.headerSize {
            let path = directory.file("cut-\(cut)")
            mkdir(path, 0o700)
            writeFile(path + "/subd-state.log", Array(bytes[..<cut]))
            let error = stateError { try openStore(path) }
            XCTAssertEqual(
                error?.description,
                "\(path)/subd-state.log: header at offset 0: the file is \(cut) bytes, shorter than the 16-byte header")
            XCTAssertEqual(readFile(path + "/subd-state.log"), Array(bytes[..<cut]))
        }
    }

    func testZeroBytesAfterTheLastRecordAreATornWrite() throws {
        let (bytes, boundaries, states) = try makeLog()
        for zeros in [1, 11, 12, 13, 100, 4096] {
            let path = directory.file("zeros-\(zeros)")
            mkdir(path, 0o700)
            writeFile(path + "/subd-state.log", bytes + [UInt8](repeating: 0, count: zeros))
            let (store, state, report) = try openStore(path)
            XCTAssertEqual(state, states.last)
            XCTAssertEqual(report.truncation?.offset, boundaries.last)
            XCTAssertEqual(report.truncation?.bytes, zeros)
            XCTAssertEqual(fileSize(store.logPath), bytes.count)
        }
    }

    func testZeroedBlocksInsideTheLastRecordAreATornWrite() throws {
        let (bytes, boundaries, states) = try makeLog()
        // The disk never wrote the blocks of the last write after some byte: the file's size covers them, and
        // they read as zeros. From every byte of the last record on.
        let lastStart = boundaries[boundaries.count - 2]
        for zeroFrom in lastStart..<bytes.count {
            var damaged = bytes
            for i in zeroFrom..<bytes.count { damaged[i] = 0 }
            guard damaged != bytes else { continue }  // the record ends in zeros of its own
            writeFile(directory.file("subd-state.log"), damaged)
            let (store, state, report) = try openStore(directory.path)
            XCTAssertEqual(state, states[states.count - 2], "zeros from \(zeroFrom)")
            XCTAssertEqual(report.truncation?.offset, lastStart, "zeros from \(zeroFrom)")
            try store.close()
        }
    }

    func testGarbageAfterTheLastRecordIsATornWrite() throws {
        let (bytes, boundaries, states) = try makeLog()
        let garbage = Array("not a record at all".utf8)
        writeFile(directory.file("subd-state.log"), bytes + garbage)
        let (store, state, report) = try openStore(directory.path)
        XCTAssertEqual(state, states.last)
        XCTAssertEqual(
            report.truncation,
            RecoveryReport.Truncation(
                offset: boundaries.last!, bytes: garbage.count,
                reason: "a damaged record header with no record after it"))
        XCTAssertEqual(readFile(store.logPath), bytes)
    }

    func testABadRecordWithAWholeRecordAfterItIsDamageEvenBehindZeros() throws {
        let (bytes, boundaries, _) = try makeLog()
        // Zeros, then a whole record: not what a crash leaves at the end, so the file is kept as it is.
        var damaged = bytes
        let secondLast = boundaries[boundaries.count - 3]
        for i in secondLast..<boundaries[boundaries.count - 2] { damaged[i] = 0 }
        writeFile(directory.file("subd-state.log"), damaged)
        let error = stateError { try openStore(directory.path) }
        XCTAssertEqual(
            error?.description,
            "\(directory.path)/subd-state.log: record at offset \(secondLast): length checksum mismatch")
        XCTAssertEqual(readFile(directory.file("subd-state.log")), damaged)
    }

    func testABadRecordFollowedByARecordCutShortIsDamage() throws {
        let (bytes, boundaries, _) = try makeLog()
        // The second-to-last record damaged, and the last one cut short: a crash cuts only the last write, so the
        // record before it was whole, and its fault is damage.
        let secondLast = boundaries[boundaries.count - 3]
        let last = boundaries[boundaries.count - 2]
        for cut in [last + 8, last + LogFormat.recordHeaderSize, bytes.count - 1] {
            for (flipped, problem) in [(secondLast + 1, "length checksum mismatch"), (last - 1, "checksum mismatch")] {
                var damaged = Array(bytes[..<cut])
                damaged[flipped] ^= 0x08
                writeFile(directory.file("subd-state.log"), damaged)
                let error = stateError { try openStore(directory.path) }
                XCTAssertEqual(
                    error?.description, "\(directory.path)/subd-state.log: record at offset \(secondLast): \(problem)",
                    "cut at \(cut), byte \(flipped) flipped")
                XCTAssertEqual(readFile(directory.file("subd-state.log")), damaged)
            }
        }
    }
}
