import Foundation

/// The records of a `subd-state.log`, read as docs/STATE.md ("The log") describes the format, with no code of subd's:
/// the tests check what reached the file against what the clients were told. Checksums are not verified (the
/// daemon's own replay does that); a record that runs past the end of the file ends the list.
struct StateLogRecords {
    /// One record.
    enum Record: Equatable {
        case created(String, retained: Bool)
        case removed(String)
        case value(number: String, revision: UInt64, payload: [UInt8])
    }

    /// The records, in the order of the file.
    let records: [Record]

    /// Reads the log at `path`.
    init(path: String) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var reader = ByteReader(bytes: bytes, offset: 16)  // the header
        var records: [Record] = []
        // length u32 | CRC of the length u32 | CRC of type + body u32 | type u8 | body (length counts type + body)
        while let length = reader.u32() {
            guard reader.skip(8), let body = reader.bytes(Int(length)) else { break }
            var field = ByteReader(bytes: body, offset: 0)
            guard let record = field.record() else {
                throw HarnessError.malformed("\(path): a record of \(length) bytes that cannot be read: \(body)")
            }
            records.append(record)
        }
        self.records = records
    }

    /// The value records of `number`: revision and payload as text, in the order of the file.
    func values(of number: String) -> [(revision: UInt64, text: String)] {
        records.compactMap {
            guard case .value(number, let revision, let payload) = $0 else { return nil }
            return (revision, String(decoding: payload, as: UTF8.self))
        }
    }
}

/// Little-endian reads from a byte array; nil past the end.
private struct ByteReader {
    let bytes: [UInt8]
    var offset: Int

    var remaining: Int { bytes.count - offset }

    mutating func skip(_ count: Int) -> Bool {
        guard remaining >= count else { return false }
        offset += count
        return true
    }

    /// A record's type and body.
    mutating func record() -> StateLogRecords.Record? {
        switch u8() {
        case 1:
            guard let name = text(), let kind = u8() else { return nil }
            return .created(name, retained: kind == 1)
        case 2:
            return text().map { .removed($0) }
        case 3:
            guard let number = text(), let revision = u64(), let hasSender = u8() else { return nil }
            if hasSender == 1 && text() == nil { return nil }
            for _ in 0..<(u8() ?? 0) where text() == nil || text() == nil { return nil }
            guard let count = u32(), let payload = bytes(Int(count)) else { return nil }
            return .value(number: number, revision: revision, payload: payload)
        default:
            return nil
        }
    }

    mutating func u8() -> UInt8? { bytes(1)?.first }
    mutating func u16() -> UInt16? { integer(2).map { UInt16($0) } }
    mutating func u32() -> UInt32? { integer(4).map { UInt32($0) } }
    mutating func u64() -> UInt64? { integer(8) }

    mutating func text() -> String? {
        guard let count = u16(), let bytes = bytes(Int(count)) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    mutating func bytes(_ count: Int) -> [UInt8]? {
        guard remaining >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    private mutating func integer(_ size: Int) -> UInt64? {
        guard let part = bytes(size) else { return nil }
        return part.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }
}
