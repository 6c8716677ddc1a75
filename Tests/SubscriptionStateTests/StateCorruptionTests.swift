import SubscriptionWire
import XCTest

@testable import SubscriptionState

/// Damage is never mistaken for a crash, and never opens as an empty or wrong state: it is one line naming the
/// file and the offset of the bad header or record, and the file is left as it was.
final class StateCorruptionTests: StateDirectoryTestCase {
    private var logPath: String { directory.file("subd-state.log") }

    /// A log of a few records and where each starts (the last entry is the end of the file).
    private func makeLog() throws -> (bytes: [UInt8], starts: [Int]) {
        let (store, _, _) = try openStore(directory.file("source"))
        var starts = [store.logBytes]
        try store.numberCreated("A", kind: .plain)
        starts.append(store.logBytes)
        try store.numberCreated("R", kind: .retained)
        starts.append(store.logBytes)
        try store.valuePublished(
            StoredValue(
                number: "R", revision: 1, sender: "lab", info: [InfoPair(key: "k", value: "v")], payload: [1, 2]))
        try store.commit()
        starts.append(store.logBytes)
        try store.numberRemoved("A")
        starts.append(store.logBytes)
        try store.valuePublished(sampleValue("R", 2))
        try store.close()
        starts.append(store.logBytes)
        return (readFile(store.logPath), starts)
    }

    private func openDamaged(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> StateError? {
        writeFile(logPath, bytes)
        let error = stateError({ try openStore(directory.path) }, file: file, line: line)
        XCTAssertEqual(readFile(logPath), bytes, "the damaged file was changed", file: file, line: line)
        return error
    }

    func testAFlippedByteInTheMiddleIsOneLineNamingTheFileAndTheRecordsOffset() throws {
        let (bytes, starts) = try makeLog()
        var damaged = bytes
        damaged[starts[2] + 20] ^= 0x40  // inside the value record's body
        XCTAssertEqual(
            openDamaged(damaged)?.description, "\(logPath): record at offset \(starts[2]): checksum mismatch")
    }

    func testEveryFlippedByteBeforeTheLastRecordIsDamageAtItsRecord() throws {
        let (bytes, starts) = try makeLog()
        let lastStart = starts[starts.count - 2]
        for offset in LogFormat.headerSize..<lastStart {
            let record = starts.lastIndex { $0 <= offset }!
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var damaged = bytes
                damaged[offset] ^= flip
                guard case .corrupt(let path, let at, .record, let problem)? = openDamaged(damaged) else {
                    XCTFail("byte \(offset) ^ \(flip): not damage")
                    continue
                }
                XCTAssertEqual(path, logPath)
                XCTAssertEqual(at, starts[record], "byte \(offset) ^ \(flip)")
                let inHeader = offset - starts[record] < 8
                XCTAssertEqual(problem, inHeader ? "length checksum mismatch" : "checksum mismatch")
            }
        }
    }

    func testAFlippedByteInTheLastRecordIsATornWriteOfThatRecordOnly() throws {
        let (bytes, starts) = try makeLog()
        let lastStart = starts[starts.count - 2]
        for offset in lastStart..<bytes.count {
            var damaged = bytes
            damaged[offset] ^= 0x10
            writeFile(logPath, damaged)
            let (store, state, report) = try openStore(directory.path)
            XCTAssertEqual(report.truncation?.offset, lastStart, "byte \(offset)")
            XCTAssertEqual(report.records, 4)
            XCTAssertEqual(state.values["R"]?.revision, 1, "byte \(offset)")
            try store.close()
        }
    }

    func testHeaderDamageAndOtherVersionsAreRefused() throws {
        let (bytes, _) = try makeLog()
        func header(_ change: (inout [UInt8]) -> Void) -> [UInt8] {
            var damaged = bytes
            change(&damaged)
            return damaged
        }
        let prefix = "\(logPath): header at offset 0: "
        XCTAssertEqual(
            openDamaged(header { $0[0] = UInt8(ascii: "X") })?.description,
            prefix + "not a subd state log (it does not start with SUBDSTATE)")
        XCTAssertEqual(openDamaged(header { $0[10] = 2 })?.description, prefix + "checksum mismatch")
        XCTAssertEqual(openDamaged(header { $0[14] ^= 1 })?.description, prefix + "checksum mismatch")
        XCTAssertEqual(
            openDamaged(Array(LogFormat.header(version: 2)) + bytes[16...])?.description,
            prefix + "format version 2 is not supported (this subd reads version 1)")
        XCTAssertEqual(
            openDamaged(Array("{\"numbers\": []}\n".utf8))?.description,
            prefix + "not a subd state log (it does not start with SUBDSTATE)")
    }

    func testRecordsWhoseChecksumsHoldButThatBreakTheRulesAreDamage() throws {
        let cases: [(before: (inout [UInt8]) -> Void, bad: (inout [UInt8]) -> Void, problem: String)] = [
            (
                { LogFormat.appendCreated("A", kind: .plain, to: &$0) },
                { LogFormat.appendCreated("A", kind: .retained, to: &$0) }, "number 'A' is created while it exists"
            ),
            (
                { LogFormat.appendCreated("A", kind: .plain, to: &$0) },
                { LogFormat.appendValue(sampleValue("A", 1), to: &$0) }, "number 'A' is not retained"
            ),
            ({ _ in }, { LogFormat.appendValue(sampleValue("A", 1), to: &$0) }, "number 'A' does not exist"),
            ({ _ in }, { LogFormat.appendRemoved("B", to: &$0) }, "number 'B' does not exist"),
            (
                {
                    LogFormat.appendCreated("A", kind: .retained, to: &$0)
                    LogFormat.appendValue(sampleValue("A", 2), to: &$0)
                },
                { LogFormat.appendValue(sampleValue("A", 2), to: &$0) },
                "revision 2 of 'A' does not follow its revision 2"
            ),
            ({ _ in }, { $0 += self.record(type: 7, body: [1, 2, 3]) }, "unknown record type 7"),
            (
                { _ in }, { $0 += self.record(type: 2, body: [1, 0, 0x41, 0]) },
                "trailing bytes (1) after a removed record"
            ),
        ]
        for (before, bad, problem) in cases {
            var bytes = LogFormat.header()
            before(&bytes)
            let offset = bytes.count
            bad(&bytes)
            // A whole record after it too: damage whether or not it is the last record.
            for tail in [[], record(type: 2, body: [1, 0, 0x5A])] {
                XCTAssertEqual(
                    openDamaged(bytes + tail)?.description, "\(logPath): record at offset \(offset): \(problem)")
            }
        }
    }

    func testANameWithALineBreakInADamagedRecordStillMakesOneLine() {
        var bytes = LogFormat.header()
        LogFormat.appendCreated("A\u{2028}B", kind: .plain, to: &bytes)
        let offset = bytes.count
        LogFormat.appendCreated("A\u{2028}B", kind: .plain, to: &bytes)
        XCTAssertEqual(
            openDamaged(bytes)?.description,
            "\(logPath): record at offset \(offset): number 'A\\u{2028}B' is created while it exists")

        var invalid = LogFormat.header()
        LogFormat.appendCreated("A\nB", kind: .plain, to: &invalid)
        XCTAssertEqual(
            openDamaged(invalid)?.description,
            "\(logPath): record at offset 16: number 'A\\u{A}B' is not a valid number: it holds the control character "
                + "0xa")
    }

    /// A record whose checksums hold and that decodes, but holds what the server never writes and could not use
    /// (a name the wire refuses, a revision the server cannot write as `rev=`, a bad sender or info pair), is
    /// damage at its offset, last or not: never a state that traps or misbehaves once restored.
    func testRecordsWithContentTheServerNeverWritesAreDamage() {
        let tooLong = String(repeating: "n", count: 201)
        func value(
            _ number: String = "R", revision: UInt64 = 1, sender: String? = nil, info: [InfoPair] = []
        ) -> StoredValue {
            StoredValue(number: number, revision: revision, sender: sender, info: info, payload: [1])
        }
        let infoProblem = "the info pairs of a value of 'R' break the wire's rule: "
        let cases: [(bad: (inout [UInt8]) -> Void, problem: String)] = [
            ({ LogFormat.appendCreated("", kind: .plain, to: &$0) }, "number '' is not a valid number: it is empty"),
            (
                { LogFormat.appendCreated("A..B", kind: .plain, to: &$0) },
                "number 'A..B' is not a valid number: it has an empty token (two dots in a row, or a dot at an end)"
            ),
            (
                { LogFormat.appendCreated("A B", kind: .retained, to: &$0) },
                "number 'A B' is not a valid number: it holds a space"
            ),
            (
                { LogFormat.appendCreated("A.*", kind: .plain, to: &$0) },
                "number 'A.*' is not a valid number: it has a wildcard token ('*' or '>'), which a number may not have"
            ),
            (
                { LogFormat.appendCreated(tooLong, kind: .plain, to: &$0) },
                "number '\(tooLong)' is not a valid number: it is 201 bytes long (at most 200)"
            ),
            (
                { LogFormat.appendRemoved("R.>", to: &$0) },
                "number 'R.>' is not a valid number: it has a wildcard token ('*' or '>'), which a number may not have"
            ),
            (
                { LogFormat.appendValue(value("R\t"), to: &$0) },
                "number 'R\\u{9}' is not a valid number: it holds the control character 0x9"
            ),
            // Int64.max itself: the next publication's revision would not fit in an Int.
            (
                { LogFormat.appendValue(value(revision: UInt64(Int64.max)), to: &$0) },
                "revision 9223372036854775807 of 'R' is above 9223372036854775806"
            ),
            (
                { LogFormat.appendValue(value(revision: UInt64(Int64.max) + 1), to: &$0) },
                "revision 9223372036854775808 of 'R' is above 9223372036854775806"
            ),
            (
                { LogFormat.appendValue(value(revision: .max), to: &$0) },
                "revision 18446744073709551615 of 'R' is above 9223372036854775806"
            ),
            (
                { LogFormat.appendValue(value(sender: "a b"), to: &$0) },
                "sender 'a b' of a value of 'R' is not a valid client name: it holds a space"
            ),
            (
                { LogFormat.appendValue(value(sender: ""), to: &$0) },
                "sender '' of a value of 'R' is not a valid client name: it is empty"
            ),
            (
                { LogFormat.appendValue(value(sender: String(repeating: "s", count: 65)), to: &$0) },
                "sender '\(String(repeating: "s", count: 65))' of a value of 'R' is not a valid client name: it is 65 "
                    + "bytes long (at most 64)"
            ),
            (
                { LogFormat.appendValue(value(info: [InfoPair(key: "1k", value: "v")]), to: &$0) },
                infoProblem + InfoPair.Problem.badKey.description
            ),
            (
                { LogFormat.appendValue(value(info: [InfoPair(key: "rev", value: "7")]), to: &$0) },
                infoProblem + InfoPair.Problem.reservedKey("rev").description
            ),
            (
                { LogFormat.appendValue(value(info: [InfoPair(key: "k", value: "a b")]), to: &$0) },
                infoProblem + InfoPair.Problem.badValue.description
            ),
            (
                { LogFormat.appendValue(value(info: [InfoPair(key: "k", value: "a=b")]), to: &$0) },
                infoProblem + InfoPair.Problem.badValue.description
            ),
            (
                { LogFormat.appendValue(value(info: [InfoPair(key: "k", value: "")]), to: &$0) },
                infoProblem + InfoPair.Problem.badValue.description
            ),
            (
                {
                    let twice = [InfoPair(key: "k", value: "1"), InfoPair(key: "k", value: "2")]
                    LogFormat.appendValue(value(info: twice), to: &$0)
                },
                infoProblem + InfoPair.Problem.duplicateKey("k").description
            ),
            (
                { LogFormat.appendValue(value(info: (0..<17).map { InfoPair(key: "k\($0)", value: "v") }), to: &$0) },
                infoProblem + InfoPair.Problem.tooMany(17).description
            ),
        ]
        for (bad, problem) in cases {
            var bytes = LogFormat.header()
            LogFormat.appendCreated("R", kind: .retained, to: &bytes)
            let offset = bytes.count
            bad(&bytes)
            // A whole record after it too: damage whether or not it is the last record.
            for tail in [[], record(type: 2, body: [1, 0, 0x52])] {
                let error = openDamaged(bytes + tail)
                XCTAssertEqual(error?.description, "\(logPath): record at offset \(offset): \(problem)")
                XCTAssertEqual(error?.description.contains("\n"), false)
            }
        }
    }

    /// The limits themselves are not damage: the largest revision whose next one the server can still write, a
    /// sender of 64 bytes, 16 info pairs, percent-encoded values.
    func testContentAtTheLimitsReplays() throws {
        let value = StoredValue(
            number: "R.\u{E9}", revision: UInt64(Int64.max) - 1, sender: String(repeating: "s", count: 64),
            info: (0..<16).map { InfoPair(key: "k\($0)", value: "for%20the%3Dlab\u{E9}") }, payload: [])
        var bytes = LogFormat.header()
        LogFormat.appendCreated(value.number, kind: .retained, to: &bytes)
        LogFormat.appendValue(value, to: &bytes)
        writeFile(logPath, bytes)
        let (store, state, _) = try openStore(directory.path)
        XCTAssertEqual(state.value(of: value.number), value)
        try store.close()
    }

    func testAnImpossibleLengthWithAValidLengthChecksumIsDamage() {
        let tooLong = littleEndian(UInt32(LogFormat.maxRecordLength + 1))
        let bytes = LogFormat.header() + tooLong + littleEndian(CRC32C.checksum(tooLong)) + [0, 0, 0, 0, 1]
        XCTAssertEqual(openDamaged(bytes)?.description, "\(logPath): record at offset 16: impossible length 1073741825")
    }

    func testALogThatCannotBeOpenedIsOneLineNamingIt() throws {
        mkdir(logPath, 0o700)  // a directory where the log should be
        let error = stateError { try openStore(directory.path) }
        XCTAssertEqual(error?.description, "open \(logPath): Is a directory")
    }

    func testAStateDirectoryThatIsAFileIsOneLineNamingIt() throws {
        writeFile(directory.file("plain-file"), [1])
        let error = stateError { try openStore(directory.file("plain-file")) }
        XCTAssertEqual(error?.description, "open \(directory.file("plain-file")): Not a directory")
    }

    /// A record of any type byte with correct checksums.
    private func record(type: UInt8, body: [UInt8]) -> [UInt8] {
        let length = littleEndian(UInt32(body.count + 1))
        return length + littleEndian(CRC32C.checksum(length)) + littleEndian(CRC32C.checksum([type] + body)) + [type]
            + body
    }

    private func littleEndian(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
}
