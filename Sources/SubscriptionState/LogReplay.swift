/// Reads a whole log from its bytes: checks the header, then replays every record in order. A pure function of the
/// bytes (the store reads the file; tests call it directly too).
///
/// The end of the log decides between a crash and damage: a record that runs past the end of the file, a last
/// record whose checksum fails, and a tail of zero bytes (blocks a crash left unwritten) are a write the crash cut;
/// replay stops before it and says so. Anything else wrong (a bad header or version, a bad record with more bytes
/// after it, a record that decodes to nonsense) is damage, and replay throws naming the offset.
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

        // The header is written whole before the log gets its name, so any fault in it is damage.
        let count = bytes.count
        guard count >= LogFormat.headerSize else {
            throw damage(.header, at: 0, "the file is \(count) bytes, shorter than the \(LogFormat.headerSize)-byte header")
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
        var values: [String: StoredValue] = [:]
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
                if slice(offset..<count).allSatisfy({ $0 == 0 }) {
                    tornReason = "\(left) zero bytes at the end"
                    break
                }
                throw damage(.record, at: offset, "length checksum mismatch")
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
                if end == count {
                    tornReason = "checksum mismatch in the last record"
                    break
                }
                throw damage(.record, at: offset, "checksum mismatch")
            }
            do {
                switch try LogRecord.decode(slice(bodyStart..<end)) {
                case .created(let number):
                    try index.create(number.name, kind: number.kind, recordBytes: end - offset)
                case .removed(let name):
                    try index.remove(name)
                    values[name] = nil
                case .value(let value):
                    try index.publish(value.number, revision: value.revision, recordBytes: end - offset)
                    values[value.number] = value
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
}
