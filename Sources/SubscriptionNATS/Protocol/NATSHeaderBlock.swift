/// The header block's wire form: `NATS/1.0[ <status>[ <description>]]` CRLF, then `Name: value` CRLF lines, then
/// an empty line (CRLF). What `HPUB` carries and `HMSG` delivers, counted in their header length.
enum NATSHeaderBlock {
    /// The first line's fixed start.
    static let version: [UInt8] = Array("NATS/1.0".utf8)

    /// Parses a whole header block (its final empty line included). `block` is read during the call only.
    static func parse(_ block: UnsafeRawBufferPointer) throws(NATSProtocolError) -> NATSHeaders {
        var lines = CRLFLines(block: block)
        guard let first = lines.next() else { throw .badHeaderBlock("no NATS/1.0 line") }
        var headers = NATSHeaders()
        try parseStatusLine(UnsafeRawBufferPointer(rebasing: block[first]), into: &headers)
        while true {
            guard let range = lines.next() else { throw .badHeaderBlock("no empty line at the end") }
            if range.isEmpty {
                guard lines.isAtEnd else { throw .badHeaderBlock("bytes after the empty line") }
                return headers
            }
            let line = UnsafeRawBufferPointer(rebasing: block[range])
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else {
                throw .badHeaderBlock("a line without 'Name:'")
            }
            let name = line[..<colon]
            guard name.allSatisfy(isNameByte) else {
                throw .badHeaderBlock("a header name with a space or control byte")
            }
            var valueStart = colon + 1
            var valueEnd = line.count
            while valueStart < valueEnd, isBlank(line[valueStart]) { valueStart += 1 }
            while valueEnd > valueStart, isBlank(line[valueEnd - 1]) { valueEnd -= 1 }
            headers.fields.append(
                NATSHeaders.Field(
                    name: String(decoding: name, as: UTF8.self),
                    value: String(decoding: line[valueStart..<valueEnd], as: UTF8.self)))
        }
    }

    /// `NATS/1.0`, `NATS/1.0 503`, `NATS/1.0 404 Message Not Found`.
    private static func parseStatusLine(_ line: UnsafeRawBufferPointer, into headers: inout NATSHeaders)
        throws(NATSProtocolError)
    {
        guard line.count >= version.count, line.prefix(version.count).elementsEqual(version) else {
            throw .badHeaderBlock("does not start with NATS/1.0")
        }
        var index = version.count
        while index < line.count, isBlank(line[index]) { index += 1 }
        guard index < line.count else { return }
        guard index > version.count, index + 3 <= line.count,
            line[index..<(index + 3)].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            index + 3 == line.count || isBlank(line[index + 3])
        else { throw .badHeaderBlock("a status that is not 3 digits") }
        headers.status = line[index..<(index + 3)].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        index += 3
        while index < line.count, isBlank(line[index]) { index += 1 }
        headers.statusDescription = String(decoding: line[index...], as: UTF8.self)
    }

    /// Appends the block for `headers` (names and values are checked by ``NATSSubject``'s rules beforehand).
    static func encode(_ headers: NATSHeaders, into out: inout [UInt8]) {
        out.append(contentsOf: version)
        if let status = headers.status {
            out.append(0x20)
            out.append(contentsOf: String(status).utf8)
            if !headers.statusDescription.isEmpty {
                out.append(0x20)
                out.append(contentsOf: headers.statusDescription.utf8)
            }
        }
        out.append(contentsOf: crlf)
        for field in headers.fields {
            out.append(contentsOf: field.name.utf8)
            out.append(UInt8(ascii: ":"))
            out.append(0x20)
            out.append(contentsOf: field.value.utf8)
            out.append(contentsOf: crlf)
        }
        out.append(contentsOf: crlf)
    }

    /// The bytes ``encode(_:into:)`` writes for `headers`.
    static func encodedCount(_ headers: NATSHeaders) -> Int {
        var count = version.count + 2 + 2
        if let status = headers.status {
            count += 1 + String(status).utf8.count
            if !headers.statusDescription.isEmpty { count += 1 + headers.statusDescription.utf8.count }
        }
        for field in headers.fields { count += field.name.utf8.count + 2 + field.value.utf8.count + 2 }
        return count
    }

    /// A header name: printable ASCII other than `:` (no space).
    static func isNameByte(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: ":") }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    static let crlf: [UInt8] = [0x0D, 0x0A]
}

/// The CRLF-ended lines of a header block, as ranges without their CRLF.
private struct CRLFLines {
    /// The block; lent by ``NATSHeaderBlock/parse(_:)``'s caller for the length of that call, which is this
    /// value's whole life (it is a local of `parse`).
    let bytes: UnsafeRawBufferPointer
    var index = 0

    init(block: UnsafeRawBufferPointer) { self.bytes = block }

    var isAtEnd: Bool { index == bytes.count }

    /// The next line; nil when no CRLF follows.
    mutating func next() -> Range<Int>? {
        var scan = index
        while scan + 1 < bytes.count {
            if bytes[scan] == 0x0D && bytes[scan + 1] == 0x0A {
                let line = index..<scan
                index = scan + 2
                return line
            }
            scan += 1
        }
        return nil
    }
}
