import SubscriptionWire

/// The layout of the state log, format version 1. This comment is its description; ``LogReplay`` says how a torn
/// write is told from damage.
///
/// A 16-byte header, then records one after another. Every integer is little-endian.
///
///     header:  "SUBDSTATE" (9 bytes) | 0x00 | version (u16) | CRC-32C of the 12 bytes before it (u32)
///     record:  length (u32) | CRC-32C of the length's 4 bytes (u32) | CRC-32C of type + body (u32) | type (u8) | body
///
/// `length` counts the type byte and the body. The length has its own checksum so that a damaged length is never
/// mistaken for a record cut short by a crash.
enum LogFormat {
    /// The first nine bytes of every log.
    static let magic: [UInt8] = Array("SUBDSTATE".utf8)
    /// The format this code writes and the only one it reads.
    static let version: UInt16 = 1
    /// Bytes of the header.
    static let headerSize = 16
    /// Bytes of a record before its type byte: length, length checksum, checksum.
    static let recordHeaderSize = 12
    /// The largest `length` (type byte and body) a record may have: 1 GiB.
    static let maxRecordLength = 1 << 30

    /// The kinds of record. A record's type byte is one of these.
    enum RecordType: UInt8 {
        /// A number was created: its name (text) and kind (u8: 0 plain, 1 retained).
        case created = 1
        /// A number was removed: its name (text).
        case removed = 2
        /// A retained number's value: name (text), revision (u64), sender (u8 0 or 1, then text when 1), info pair
        /// count (u8), each pair's key and value (text, text), payload (u32 count, then the bytes).
        case value = 3
    }

    /// The header of a log of format `version`.
    static func header(version: UInt16 = version) -> [UInt8] {
        var bytes = magic
        bytes.append(0)
        appendLittleEndian(version, to: &bytes)
        appendLittleEndian(CRC32C.checksum(bytes), to: &bytes)
        return bytes
    }

    /// Appends a `created` record; returns its size in bytes.
    @discardableResult
    static func appendCreated(_ name: String, kind: StoredNumber.Kind, to buffer: inout [UInt8]) -> Int {
        appendRecord(.created, to: &buffer) { body in
            appendText(name, to: &body)
            body.append(kind.rawValue)
        }
    }

    /// Appends a `removed` record; returns its size in bytes.
    @discardableResult
    static func appendRemoved(_ name: String, to buffer: inout [UInt8]) -> Int {
        appendRecord(.removed, to: &buffer) { body in appendText(name, to: &body) }
    }

    /// Appends a `value` record; returns its size in bytes.
    @discardableResult
    static func appendValue(_ value: StoredValue, to buffer: inout [UInt8]) -> Int {
        appendValue(
            of: value.number, revision: value.revision, sender: value.sender, info: value.info,
            payload: value.payload[...], to: &buffer)
    }

    /// ``appendValue(_:to:)`` from the value's parts, so a publication's payload is copied once, into the record.
    static func appendValue(
        of number: String, revision: UInt64, sender: String?, info: [InfoPair], payload: ArraySlice<UInt8>,
        to buffer: inout [UInt8]
    ) -> Int {
        precondition(info.count <= Int(UInt8.max), "a stored value holds at most 255 info pairs")
        precondition(payload.count <= maxRecordLength - 4096, "a stored payload is at most 1 GiB - 4 KiB")
        return appendRecord(.value, to: &buffer) { body in
            appendText(number, to: &body)
            appendLittleEndian(revision, to: &body)
            if let sender {
                body.append(1)
                appendText(sender, to: &body)
            } else {
                body.append(0)
            }
            body.append(UInt8(info.count))
            for pair in info {
                appendText(pair.key, to: &body)
                appendText(pair.value, to: &body)
            }
            appendLittleEndian(UInt32(payload.count), to: &body)
            body.append(contentsOf: payload)
        }
    }

    /// Appends a record of `type` whose body `writeBody` appends, then fills in its length and checksums.
    private static func appendRecord(_ type: RecordType, to buffer: inout [UInt8], _ writeBody: (inout [UInt8]) -> Void)
        -> Int
    {
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: recordHeaderSize))
        buffer.append(type.rawValue)
        writeBody(&buffer)
        let length = buffer.count - start - recordHeaderSize
        precondition(length <= maxRecordLength, "a state record is at most 1 GiB")
        buffer.withUnsafeMutableBytes { bytes in
            let record = UnsafeMutableRawBufferPointer(rebasing: bytes[start...])
            record.storeBytes(of: UInt32(length).littleEndian, toByteOffset: 0, as: UInt32.self)
            let lengthCheck = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: record[0..<4]))
            record.storeBytes(of: lengthCheck.littleEndian, toByteOffset: 4, as: UInt32.self)
            let check = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: record[recordHeaderSize...]))
            record.storeBytes(of: check.littleEndian, toByteOffset: 8, as: UInt32.self)
        }
        return buffer.count - start
    }

    /// Appends a text: its UTF-8 byte count (u16) and the bytes.
    private static func appendText(_ text: String, to buffer: inout [UInt8]) {
        let count = text.utf8.count
        precondition(count <= Int(UInt16.max), "a stored name, key or value is at most 65535 bytes")
        appendLittleEndian(UInt16(count), to: &buffer)
        buffer.append(contentsOf: text.utf8)
    }

    static func appendLittleEndian<Integer: FixedWidthInteger>(_ value: Integer, to buffer: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { buffer.append(contentsOf: $0) }
    }
}

/// One decoded record.
enum LogRecord: Equatable {
    /// A number was created.
    case created(StoredNumber)
    /// A number was removed.
    case removed(String)
    /// A retained number got a new value.
    case value(StoredValue)

    /// A record body that does not decode; the reason is a phrase for
    /// ``StateError/corrupt(path:offset:part:problem:)``.
    struct Malformed: Error {
        var problem: String
    }

    /// Decodes the type byte and body of a record whose checksum held.
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(Malformed) -> LogRecord {
        var reader = BodyReader(bytes: bytes)
        let typeByte = try reader.byte()
        guard let type = LogFormat.RecordType(rawValue: typeByte) else {
            throw Malformed(problem: "unknown record type \(typeByte)")
        }
        let record: LogRecord
        switch type {
        case .created:
            let name = try reader.text("number")
            let kindByte = try reader.byte()
            guard let kind = StoredNumber.Kind(rawValue: kindByte) else {
                throw Malformed(problem: "unknown number kind \(kindByte) for \(quoted(name))")
            }
            record = .created(StoredNumber(name: name, kind: kind))
        case .removed:
            record = .removed(try reader.text("number"))
        case .value:
            let number = try reader.text("number")
            let revision = try reader.integer(UInt64.self)
            let hasSender = try reader.byte()
            guard hasSender <= 1 else { throw Malformed(problem: "bad sender flag \(hasSender) in a value") }
            let sender = hasSender == 1 ? try reader.text("sender") : nil
            let pairCount = Int(try reader.byte())
            var info: [InfoPair] = []
            info.reserveCapacity(pairCount)
            for _ in 0..<pairCount {
                let key = try reader.text("info key")
                info.append(InfoPair(key: key, value: try reader.text("info value")))
            }
            let payload = try reader.bytes(count: Int(try reader.integer(UInt32.self)), "payload")
            record = .value(
                StoredValue(number: number, revision: revision, sender: sender, info: info, payload: payload))
        }
        guard reader.remaining == 0 else {
            throw Malformed(problem: "trailing bytes (\(reader.remaining)) after a \(type) record")
        }
        return record
    }
}

/// Reads a record body front to back; running past its end is ``LogRecord/Malformed``.
private struct BodyReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    var remaining: Int { bytes.count - offset }

    mutating func byte() throws(LogRecord.Malformed) -> UInt8 {
        try need(1, "a byte")
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func integer<Integer: FixedWidthInteger>(_: Integer.Type) throws(LogRecord.Malformed) -> Integer {
        let size = MemoryLayout<Integer>.size
        try need(size, "a \(size * 8)-bit integer")
        defer { offset += size }
        return Integer(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Integer.self))
    }

    mutating func text(_ what: String) throws(LogRecord.Malformed) -> String {
        let count = Int(try integer(UInt16.self))
        try need(count, "the \(what)")
        defer { offset += count }
        guard
            let text = String(
                validating: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]),
                as: UTF8.self)
        else { throw LogRecord.Malformed(problem: "the \(what) is not UTF-8") }
        return text
    }

    mutating func bytes(count: Int, _ what: String) throws(LogRecord.Malformed) -> [UInt8] {
        try need(count, "the \(what)")
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    private func need(_ count: Int, _ what: String) throws(LogRecord.Malformed) {
        guard remaining >= count else {
            throw LogRecord.Malformed(problem: "the record ends inside \(what) (\(remaining) of \(count) bytes)")
        }
    }
}
