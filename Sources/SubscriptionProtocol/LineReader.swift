/// Walks the arguments of one command line, as index ranges into the parser's buffer.
struct LineReader {
    /// The parser's buffer (shared storage, not a copy).
    let bytes: [UInt8]
    /// The next byte to look at.
    var position: Int
    /// One past the line's last byte (LF and CR already excluded).
    let end: Int

    /// True when the line holds only spaces and CRs.
    var isBlank: Bool {
        var index = position
        while index < end {
            let byte = bytes[index]
            if byte != ASCII.space && byte != ASCII.cr { return false }
            index += 1
        }
        return true
    }

    /// True when only spaces are left.
    var isAtEnd: Bool {
        var copy = self
        copy.skipSpaces()
        return copy.position == end
    }

    /// Moves past any spaces.
    mutating func skipSpaces() {
        while position < end && bytes[position] == ASCII.space { position += 1 }
    }

    /// Skips spaces and returns the run of non-space bytes after them; nil at the end of the line.
    /// Leaves `position` on the space (or end) right after the word.
    mutating func word() -> Range<Int>? {
        skipSpaces()
        guard position < end else { return nil }
        let start = position
        while position < end && bytes[position] != ASCII.space { position += 1 }
        return start..<position
    }

    /// The bytes from `position` to the end of the line.
    var rest: Range<Int> { position..<end }

    /// Splits `key=value` at its first `=`; nil when the word has none.
    func keyValue(_ word: Range<Int>) -> (key: Range<Int>, value: Range<Int>)? {
        guard let equals = bytes[word].firstIndex(of: ASCII.equals) else { return nil }
        return (word.lowerBound..<equals, (equals + 1)..<word.upperBound)
    }

    /// True when the bytes in `range` are exactly `text` (ASCII, case-sensitive).
    func matches(_ range: Range<Int>, _ text: StaticString) -> Bool {
        guard range.count == text.utf8CodeUnitCount else { return false }
        var index = range.lowerBound
        var textIndex = 0
        let start = text.utf8Start
        while index < range.upperBound {
            if bytes[index] != start[textIndex] { return false }
            index += 1
            textIndex += 1
        }
        return true
    }
}
