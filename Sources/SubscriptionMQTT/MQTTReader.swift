/// Reads the fields of one whole packet's body (section 1.5's data types) from the decoder's buffer: `bytes`
/// from `index` up to `end`. Every read that would run past `end` is a malformed packet, named after the field
/// (`what`, as in `the topic name`, made only when it is needed).
struct MQTTReader {
    /// The decoder's storage (shared, not copied: a PUBLISH's payload is a slice of it).
    let bytes: [UInt8]
    /// The next byte to read.
    var index: Int
    /// One past the last byte that may be read: the packet's end, or the end of a property list while it is read.
    var end: Int
    /// True while a property list is read (`end` is the list's end).
    var readingProperties = false

    /// A reader of `bytes[start..<end]`.
    init(bytes: [UInt8], start: Int, end: Int) {
        self.bytes = bytes
        self.index = start
        self.end = end
    }

    /// The bytes left to read.
    var remaining: Int { end - index }

    /// True when every byte was read.
    var isAtEnd: Bool { index == end }

    /// The failure of a field that does not fit in what is left.
    func pastTheEnd(_ what: @autoclosure () -> String) -> MQTTDecodeError {
        .malformed("the \(readingProperties ? "property list" : "packet") ends inside \(what())")
    }

    /// Checks that nothing is left after the last field of `packet`.
    func expectEnd(of packet: String) throws(MQTTDecodeError) {
        if index != end { throw .malformed("\(end - index) bytes left over after the end of \(packet)") }
    }

    /// A one-byte integer.
    mutating func byte(_ what: @autoclosure () -> String) throws(MQTTDecodeError) -> UInt8 {
        guard index < end else { throw pastTheEnd(what()) }
        defer { index += 1 }
        return bytes[index]
    }

    /// A two-byte big-endian integer.
    mutating func uint16(_ what: @autoclosure () -> String) throws(MQTTDecodeError) -> UInt16 {
        guard remaining >= 2 else { throw pastTheEnd(what()) }
        defer { index += 2 }
        return UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1])
    }

    /// A four-byte big-endian integer.
    mutating func uint32(_ what: @autoclosure () -> String) throws(MQTTDecodeError) -> UInt32 {
        guard remaining >= 4 else { throw pastTheEnd(what()) }
        defer { index += 4 }
        var value: UInt32 = 0
        for offset in 0..<4 { value = value << 8 | UInt32(bytes[index + offset]) }
        return value
    }

    /// A variable byte integer (section 1.5.5): 1 to 4 bytes, 7 bits each, least significant first.
    mutating func variableByteInteger(_ what: @autoclosure () -> String) throws(MQTTDecodeError) -> Int {
        var value = 0
        for count in 0..<4 {
            let byte = try self.byte(what())
            value |= Int(byte & 0x7F) << (7 * count)
            if byte & 0x80 == 0 { return value }
        }
        throw .malformed("\(what()) in more than 4 bytes")
    }

    /// The range of a two-byte length and that many bytes (binary data, or a string not yet checked).
    mutating func lengthPrefixed(_ what: @autoclosure () -> String) throws(MQTTDecodeError) -> Range<Int> {
        let count = Int(try uint16(what()))
        guard remaining >= count else { throw pastTheEnd(what()) }
        defer { index += count }
        return index..<(index + count)
    }

    /// Binary data (section 1.5.6): a two-byte length and that many bytes.
    mutating func binary(_ what: @autoclosure () -> String) throws(MQTTDecodeError) -> [UInt8] {
        Array(bytes[try lengthPrefixed(what())])
    }

    /// A UTF-8 encoded string (section 1.5.4): a two-byte length and that many bytes of well-formed UTF-8 without
    /// U+0000.
    mutating func string(_ what: @autoclosure () -> String) throws(MQTTDecodeError) -> String {
        let range = try lengthPrefixed(what())
        guard let text = Self.text(bytes[range]) else {
            throw .malformed("\(what()) is not well-formed UTF-8 without U+0000")
        }
        return text
    }

    /// `utf8` as a String when it is well-formed UTF-8 without U+0000, else nil.
    static func text(_ utf8: ArraySlice<UInt8>) -> String? {
        var ascii = true
        for byte in utf8 {
            if byte == 0 { return nil }
            if byte >= 0x80 { ascii = false }
        }
        return ascii ? String(decoding: utf8, as: UTF8.self) : String(validating: utf8, as: UTF8.self)
    }
}
