import SubscriptionWire
import TestSupport
import XCTest

@testable import SubscriptionState

/// What is stored comes back after a close and an open: numbers with their kinds in creation order, values with
/// revision, sender, info pairs and payload bytes; and the log is the same whatever pieces the kernel takes each
/// write in.
final class StateRoundTripTests: StateDirectoryTestCase {
    func testANewDirectoryGetsAnEmptyLogWithAWholeHeader() throws {
        let path = directory.file("state")
        let (store, state, report) = try openStore(path)
        XCTAssertEqual(state, RecoveredState())
        XCTAssertTrue(report.created)
        XCTAssertEqual(report.description, "state: new log \(path)/subd-state.log")
        XCTAssertEqual(readFile(store.logPath), LogFormat.header())
        XCTAssertNil(fileSize(directory.file("state/subd-state.log.tmp")))
        try store.close()

        let (_, again, reopened) = try openStore(path)
        XCTAssertEqual(again, RecoveredState())
        XCTAssertFalse(reopened.created)
        XCTAssertEqual(reopened.records, 0)
    }

    func testNumbersAndValuesComeBackAfterAReopen() throws {
        let (store, _, _) = try openStore(directory.path)
        let physics = StoredValue(
            number: "SCIENCE.physics", revision: 2, sender: "lab",
            info: [InfoPair(key: "unit", value: "EUR"), InfoPair(key: "note", value: "for%20the%20lab")],
            payload: [0, 0xFF, 10, 13] + Array("binary\nsafe".utf8))
        try store.numberCreated("SCIENCE", kind: .plain)
        try store.numberCreated("SCIENCE.physics", kind: .retained)
        try store.numberCreated("Ünï.cöde", kind: .retained)
        try store.valuePublished(sampleValue("SCIENCE.physics", 1))
        try store.valuePublished(physics)
        try store.valuePublished(StoredValue(number: "Ünï.cöde", revision: 1, payload: []))
        try store.numberRemoved("SCIENCE")
        try store.numberCreated("SCIENCE", kind: .plain)
        try store.close()

        let (_, state, report) = try openStore(directory.path)
        XCTAssertEqual(
            state.numbers,
            [
                StoredNumber(name: "SCIENCE.physics", kind: .retained),
                StoredNumber(name: "Ünï.cöde", kind: .retained),
                StoredNumber(name: "SCIENCE", kind: .plain),
            ])
        XCTAssertEqual(
            state.values,
            ["SCIENCE.physics": physics, "Ünï.cöde": StoredValue(number: "Ünï.cöde", revision: 1, payload: [])])
        XCTAssertEqual(state.kind(of: "SCIENCE"), .plain)
        XCTAssertNil(state.kind(of: "ART"))
        XCTAssertEqual(report.records, 8)
        XCTAssertEqual(report.numbers, 3)
        XCTAssertEqual(report.values, 2)
        XCTAssertNil(report.truncation)
        XCTAssertFalse(report.description.contains("\n"))
    }

    /// Numbers are bytes (docs/PROTOCOL.md, Words): "café" in NFC and in NFD, one key to Swift's String ==, are two
    /// numbers with a value each, through a compaction and a reopen. (The second CREATE used to trap in
    /// numberCreated: the index said it existed.)
    func testCanonicallyEquivalentSpellingsAreTwoNumbersWithAValueEach() throws {
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        let (store, _, _) = try openStore(directory.path)
        try store.numberCreated(composed, kind: .retained)
        try store.numberCreated(decomposed, kind: .retained)
        XCTAssertEqual(store.numberCount, 2)
        var values: [ExactName: StoredValue] = [:]
        for value in [
            sampleValue(composed, 1, sender: "nfc"), sampleValue(decomposed, 1, sender: "nfd"),
            sampleValue(decomposed, 2, sender: "nfd"),
        ] {
            try store.valuePublished(value)
            values[ExactName(value.number)] = value
        }
        try store.compact { values[ExactName($0)] }
        try store.close()

        let (again, state, report) = try openStore(directory.path)
        XCTAssertEqual(report.numbers, 2)
        XCTAssertEqual(report.values, 2)
        XCTAssertEqual(state.numbers.map { Array($0.name.utf8) }, [Array(composed.utf8), Array(decomposed.utf8)])
        XCTAssertEqual(state.values, values)
        XCTAssertEqual(state.value(of: composed).map { Array($0.number.utf8) }, Array(composed.utf8))
        XCTAssertEqual(state.value(of: composed)?.payload, Array("\(composed) at 1".utf8))
        XCTAssertEqual(state.value(of: decomposed).map { Array($0.number.utf8) }, Array(decomposed.utf8))
        XCTAssertEqual(state.value(of: decomposed)?.revision, 2)
        XCTAssertEqual(state.value(of: decomposed)?.sender, "nfd")

        // Removing one spelling leaves the other, with its value.
        try again.numberRemoved(composed)
        try again.close()
        let (_, after, _) = try openStore(directory.path)
        XCTAssertEqual(after.numbers, [StoredNumber(name: decomposed, kind: .retained)])
        XCTAssertEqual(after.values, [ExactName(decomposed): sampleValue(decomposed, 2, sender: "nfd")])
        XCTAssertNil(after.kind(of: composed))
        XCTAssertEqual(after.kind(of: decomposed), .retained)
        XCTAssertNil(after.value(of: composed))
    }

    func testCreationOrderIsKeptThroughRemovals() throws {
        let (store, _, _) = try openStore(directory.path)
        var expected: [StoredNumber] = []
        for i in 0..<60 {
            let number = StoredNumber(name: "N\((i * 37) % 60)", kind: i % 3 == 0 ? .retained : .plain)
            try store.numberCreated(number.name, kind: number.kind)
            expected.append(number)
        }
        for i in stride(from: 0, to: 60, by: 7) {
            try store.numberRemoved(expected[i].name)
        }
        expected = expected.enumerated().filter { $0.offset % 7 != 0 }.map(\.element)
        try store.numberCreated("N0", kind: .plain)
        expected.append(StoredNumber(name: "N0", kind: .plain))
        try store.close()

        XCTAssertEqual(try openStore(directory.path).1.numbers, expected)
    }

    func testARemovedRetainedNumberLosesItsValueAndStartsAgainAtRevisionOne() throws {
        let (store, _, _) = try openStore(directory.path)
        try store.numberCreated("R", kind: .retained)
        for revision in 1...3 { try store.valuePublished(sampleValue("R", UInt64(revision))) }
        try store.numberRemoved("R")
        try store.numberCreated("R", kind: .plain)
        try store.close()
        var (again, state, _) = try openStore(directory.path)
        XCTAssertEqual(state.numbers, [StoredNumber(name: "R", kind: .plain)])
        XCTAssertEqual(state.values, [:])

        try again.numberRemoved("R")
        try again.numberCreated("R", kind: .retained)
        try again.valuePublished(sampleValue("R", 1))
        try again.close()
        (again, state, _) = try openStore(directory.path)
        XCTAssertEqual(state.values, ["R": sampleValue("R", 1)])
    }

    func testBufferedValuesAreLostWithoutAFlushAsInACrash() throws {
        var store: StateStore? = try openStore(directory.path).0
        try store!.numberCreated("R", kind: .retained)
        try store!.valuePublished(sampleValue("R", 1))
        try store!.flush()
        try store!.valuePublished(sampleValue("R", 2))
        store = nil  // no close: the buffered revision 2 goes, as with kill -9

        let (_, state, report) = try openStore(directory.path)
        XCTAssertEqual(state.values, ["R": sampleValue("R", 1)])
        XCTAssertNil(report.truncation)
    }

    func testASecondOpenOfTheSameDirectoryIsRefusedWhileTheFirstIsOpen() throws {
        let (store, _, _) = try openStore(directory.path)
        let error = stateError { try openStore(directory.path) }
        XCTAssertEqual(error, .locked(directory: directory.path))
        XCTAssertEqual(
            error?.description, "\(directory.path): the state directory is in use by another process (its lock is held)"
        )
        try store.close()
        XCTAssertNoThrow(try openStore(directory.path))
    }

    func testATrailingSlashNamesTheSameDirectory() throws {
        let (store, _, _) = try openStore(directory.path + "/")
        XCTAssertEqual(store.directory, directory.path)
        XCTAssertEqual(store.logPath, directory.path + "/subd-state.log")
    }

    func testTheLogIsTheSameWhetherTheKernelTakesEachWriteWholeByteByByteOrInRandomPieces() throws {
        var random = SeededGenerator(seed: 5)
        let pieces: [(String, ((Int) -> Int)?)] = [
            ("whole", nil), ("one byte", { _ in 1 }), ("random", { Int.random(in: 1...$0, using: &random) }),
        ]
        var logs: [[UInt8]] = []
        for (name, piece) in pieces {
            let disk = CountingDisk()
            disk.writePiece = piece
            let path = directory.file(name)
            let (store, _, _) = try openStore(path, disk: disk)
            try store.numberCreated("R", kind: .retained)
            try store.numberCreated("P", kind: .plain)
            for revision in 1...20 {
                let payload = [UInt8](repeating: UInt8(revision), count: 50)
                try store.valuePublished(StoredValue(number: "R", revision: UInt64(revision), payload: payload))
                if revision % 7 == 0 { try store.endOfTurn() }
            }
            try store.numberRemoved("P")
            try store.close()
            logs.append(readFile(store.logPath))
            let (_, state, report) = try openStore(path)
            XCTAssertEqual(state.numbers, [StoredNumber(name: "R", kind: .retained)], name)
            XCTAssertEqual(state.values["R"]?.revision, 20, name)
            XCTAssertNil(report.truncation, name)
        }
        XCTAssertEqual(logs[1], logs[0], "one byte at a time")
        XCTAssertEqual(logs[2], logs[0], "random pieces")
    }
}
