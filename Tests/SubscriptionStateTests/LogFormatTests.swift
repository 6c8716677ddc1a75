import SubscriptionWire
import XCTest

@testable import SubscriptionState

/// The bytes of format version 1 as LogFormat describes them, and each record's round trip.
final class LogFormatTests: XCTestCase {
    func testTheHeaderIsMagicZeroVersionAndChecksum() {
        let header = LogFormat.header()
        XCTAssertEqual(header.count, 16)
        XCTAssertEqual(Array(header[0..<9]), Array("SUBDSTATE".utf8))
        XCTAssertEqual(Array(header[9..<12]), [0, 1, 0])
        XCTAssertEqual(Array(header[12..<16]), littleEndian(CRC32C.checksum(Array(header[0..<12]))))
    }

    func testACreatedRecordByteByByte() {
        var bytes: [UInt8] = []
        XCTAssertEqual(LogFormat.appendCreated("AB", kind: .retained, to: &bytes), 18)
        // length 6 = type + u16 count + "AB" + kind
        let body: [UInt8] = [1, 2, 0, 0x41, 0x42, 1]
        let expected =
            [6, 0, 0, 0] + littleEndian(CRC32C.checksum([6, 0, 0, 0]))
            + littleEndian(CRC32C.checksum(body)) + body
        XCTAssertEqual(bytes, expected)
    }

    func testEveryRecordDecodesToWhatWasEncoded() throws {
        let records: [LogRecord] = [
            .created(StoredNumber(name: "SCIENCE", kind: .plain)),
            .created(StoredNumber(name: "Ünï.cöde", kind: .retained)),
            .removed("SCIENCE"),
            .value(StoredValue(number: "A", revision: 1, payload: [])),
            .value(
                StoredValue(
                    number: "SCIENCE.physics", revision: UInt64.max, sender: "lab",
                    info: [InfoPair(key: "unit", value: "EUR"), InfoPair(key: "note", value: "for%20the%20lab")],
                    payload: [0, 10, 13, 0xFF] + Array(repeating: 7, count: 70_000))),
        ]
        for record in records {
            var bytes: [UInt8] = []
            switch record {
            case .created(let number): LogFormat.appendCreated(number.name, kind: number.kind, to: &bytes)
            case .removed(let name): LogFormat.appendRemoved(name, to: &bytes)
            case .value(let value): LogFormat.appendValue(value, to: &bytes)
            }
            let decoded = try bytes.withUnsafeBytes {
                try LogRecord.decode(UnsafeRawBufferPointer(rebasing: $0[12...]))
            }
            XCTAssertEqual(decoded, record)
        }
    }

    func testMalformedBodiesAreRefusedWithAReason() {
        let cases: [(body: [UInt8], problem: String)] = [
            ([9], "unknown record type 9"),
            ([1, 1, 0, 0x41, 2], "unknown number kind 2 for 'A'"),
            ([1, 1, 0, 0x41], "the record ends inside a byte (0 of 1 bytes)"),
            ([1, 5, 0, 0x41], "the record ends inside the number (1 of 5 bytes)"),
            ([2, 1, 0, 0x41, 0], "trailing bytes (1) after a removed record"),
            ([2, 2, 0, 0xC3, 0x28], "the number is not UTF-8"),
            ([3, 1, 0, 0x41] + [UInt8](repeating: 0, count: 8) + [2], "bad sender flag 2 in a value"),
            (
                [3, 1, 0, 0x41] + [UInt8](repeating: 0, count: 8) + [0, 0, 9, 0, 0, 0],
                "the record ends inside the payload (0 of 9 bytes)"
            ),
        ]
        for (body, problem) in cases {
            XCTAssertThrowsError(try body.withUnsafeBytes { try LogRecord.decode($0) }, "\(body)") { error in
                XCTAssertEqual((error as? LogRecord.Malformed)?.problem, problem)
            }
        }
    }

    private func littleEndian(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
}
