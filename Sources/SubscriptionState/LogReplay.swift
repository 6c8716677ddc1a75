import SubscriptionWire

/// Reads a whole log from its bytes: checks the header, then replays every record in order. A pure function of the
/// bytes (the store reads the file; tests call it directly too).
///
/// Torn write or damage. A crash can only spoil the end of the log: the last write (one record, or a turn's
/// records), cut at any byte, or with blocks the disk never wrote, which read as zeros. So replay stops before the
/// first bad record and reports the rest as torn when the log does not go on after it:
///
/// - fewer bytes than a record header are left;
/// - a record's length (its checksum holds) runs past the end of the file;
/// - a record's length or body fails its checksum, and no record header whose length checksum holds starts
///   anywhere after it (after its body, when its length is sound): zeros, or the rest of a write cut short.
///
/// Everything else is damage, and replay throws ``StateError/corrupt(path:offset:part:problem:)`` naming the offset:
/// any fault in the header (it is written whole before the log gets its name), an unknown version, a bad record
/// with a record header after it (the log went on, so a crash did not leave it), an impossible length whose
/// checksum holds, and a record whose checksums hold but that decodes to nonsense (an unknown type, a number
/// created twice...) or to content subd never writes (``checkContent(_:)``: a name, sender, info pair or revision
/// the server could not use), last or not. What replay returns is thus safe to hand to the server as it is.
struct LogReplay {
    /// The result of a replay.
    struct Outcome {
        /// The recovered numbers and values.
        var state: RecoveredState
        /// The same numbers without the values' bytes, for the store to go on from.
        var index: LiveIndex
        /// Records replayed.
        var records: Int
        /// Bytes of the valid log: the header and every replayed record. The file is cut here when it is longer.
        var validLength: Int
        /// Why the bytes after ``validLength`` were left out, when there are any.
        var tornReason: String?
    }

    /// Replays `bytes`, the contents of the log at `path` (named in errors).
    static func replay(_ bytes: UnsafeRawBufferPointer, path: String) throws(StateError) -> Outcome {
        func damage(_ part: StateError.Part, at offset: Int, _ problem: String) -> StateError {
            .corrupt(path: path, offset: offset, part: part, problem: problem)
        }
        func u32(_ offset: Int) -> UInt32 {
            UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        }
        func slice(_ range: Range<Int>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[range]) }
        /// Whether a record header whose length checksum holds, of a possible length, starts at any offset from
        /// `start` on: the log went on after a bad record, which a torn write cannot leave. Only read after a bad
        /// record, so its cost (a 4-byte checksum per byte of the rest of the file) is paid once.
        func logGoesOn(from start: Int) -> Bool {
            var candidate = start
            while candidate + 8 <= count {
                let length = Int(u32(candidate))
                if length >= 1, length <= LogFormat.maxRecordLength,
                    CRC32C.checksum(slice(candidate..<candidate + 4)) == u32(candidate + 4)
                {
                    return true
                }
                candidate += 1
            }
            return false
        }

        // The header is written whole before the log gets its name, so any fault in it is damage.
        let count = bytes.count
        guard count >= LogFormat.headerSize else {
            throw damage(
                .header, at: 0, "the file is \(count) bytes, shorter than the \(LogFormat.headerSize)-byte header")
        }
        guard slice(0..<LogFormat.magic.count).elementsEqual(LogFormat.magic) else {
            throw damage(.header, at: 0, "not a subd state log (it does not start with SUBDSTATE)")
        }
        guard CRC32C.checksum(slice(0..<12)) == u32(12) else { throw damage(.header, at: 0, "checksum mismatch") }
        let version = UInt16(bytes[10]) | UInt16(bytes[11]) << 8
        guard version == LogFormat.version else {
            throw damage(.header, at: 0, "format version \(version) is not supported (this subd reads version 1)")
        }
        guard bytes[9] == 0 else { throw damage(.header, at: 0, "reserved byte 9 is \(bytes[9]), not 0") }

        var index = LiveIndex()
        var values: [ExactName: StoredValue] = [:]
        var records = 0
        var offset = LogFormat.headerSize
        var tornReason: String?
        while offset < count {
            let left = count - offset
            guard left >= LogFormat.recordHeaderSize else {
                tornReason = "a record header cut short (\(left) of \(LogFormat.recordHeaderSize) bytes)"
                break
            }
            let length = Int(u32(offset))
            guard CRC32C.checksum(slice(offset..<offset + 4)) == u32(offset + 4) else {
                guard !logGoesOn(from: offset + 1) else {
                    throw damage(.record, at: offset, "length checksum mismatch")
                }
                tornReason =
                    slice(offset..<count).allSatisfy { $0 == 0 }
                    ? "\(left) zero bytes at the end" : "a damaged record header with no record after it"
                break
            }
            guard length >= 1, length <= LogFormat.maxRecordLength else {
                throw damage(.record, at: offset, "impossible length \(length)")
            }
            let bodyStart = offset + LogFormat.recordHeaderSize
            let end = bodyStart + length
            guard end <= count else {
                tornReason = "a record cut short (\(left) of \(end - offset) bytes)"
                break
            }
            guard CRC32C.checksum(slice(bodyStart..<end)) == u32(offset + 8) else {
                guard !logGoesOn(from: end) else { throw damage(.record, at: offset, "checksum mismatch") }
                tornReason = "checksum mismatch in the last record"
                break
            }
            do {
                let record = try LogRecord.decode(slice(bodyStart..<end))
                try checkContent(record)
                switch record {
                case .created(let number):
                    try index.create(number.name, kind: number.kind, recordBytes: end - offset)
                case .removed(let name):
                    try index.remove(name)
                    values[ExactName(name)] = nil
                case .value(let value):
                    try index.publish(value.number, revision: value.revision, recordBytes: end - offset)
                    values[ExactName(value.number)] = value
                }
            } catch let malformed as LogRecord.Malformed {
                throw damage(.record, at: offset, malformed.problem)
            } catch let refusal as LiveIndex.Refusal {
                throw damage(.record, at: offset, refusal.description)
            } catch {
                preconditionFailure("unexpected error \(error)")
            }
            records += 1
            offset = end
        }
        return Outcome(
            state: RecoveredState(numbers: index.numbersInCreationOrder, values: values), index: index,
            records: records, validLength: offset, tornReason: tornReason)
    }

    /// The largest revision a value may have. The server writes a revision as `rev=` through an Int, so a revision
    /// above `Int64.max` traps it; and the next publication to a restored value takes its revision + 1, so
    /// `Int64.max` itself would trap at that publication.
    static let maxRevision = UInt64(Int64.max) - 1

    /// Checks that a record whose checksums hold and that decodes holds only what the server could have written
    /// and can use again: a number by the wire's rule (``Names/checkNumber(_:)``); for a value, a revision up to
    /// ``maxRevision``, a sender by the client-name rule (``ClientName/check(_:)``) and info pairs by
    /// ``InfoPair/check(_:)`` (values as sent, percent-encoded). Anything else would trap or be refused once
    /// restored, so it is damage, reported like any other.
    static func checkContent(_ record: LogRecord) throws(LogRecord.Malformed) {
        func checkNumber(_ name: String) throws(LogRecord.Malformed) {
            do {
                try Names.checkNumber(name)
            } catch {
                throw LogRecord.Malformed(problem: "number \(quoted(name)) is not a valid number: it \(error)")
            }
        }
        switch record {
        case .created(let number):
            try checkNumber(number.name)
        case .removed(let name):
            try checkNumber(name)
        case .value(let value):
            try checkNumber(value.number)
            guard value.revision <= maxRevision else {
                throw LogRecord.Malformed(
                    problem: "revision \(value.revision) of \(quoted(value.number)) is above \(maxRevision)")
            }
            if let sender = value.sender {
                do {
                    try ClientName.check(sender)
                } catch {
                    throw LogRecord.Malformed(
                        problem: "sender \(quoted(sender)) of a value of \(quoted(value.number)) is not a valid "
                            + "client name: it \(error)")
                }
            }
            do {
                try InfoPair.check(value.info)
            } catch {
                throw LogRecord.Malformed(
                    problem: "the info pairs of a value of \(quoted(value.number)) break the wire's rule: \(error)")
            }
        }
    }
}
