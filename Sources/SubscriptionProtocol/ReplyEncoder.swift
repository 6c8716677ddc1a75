/// Encodes replies and pushes as wire bytes (docs/PROTOCOL.md, Replies and Pushes), appending to a
/// caller-owned buffer so one buffer can gather everything pending for a connection.
///
/// Free text (`+OK <text>`, `+PONG <text>`, `-ERR` messages, list lines) has each CR and LF replaced by a space,
/// so every reply line stays one line. Numbers and client names are written as given: the parser has validated
/// them already.
public enum ReplyEncoder {
    /// `+OK\n`, or `+OK <text>\n` when `text` is not nil or empty.
    public static func ok(_ text: String? = nil, into buffer: inout [UInt8]) {
        appendASCII("+OK", into: &buffer)
        appendOptionalText(text, into: &buffer)
    }

    /// `+OK <count>\n`, the digits written directly (no String is made).
    public static func okCount(_ count: Int, into buffer: inout [UInt8]) {
        withUnsafeTemporaryAllocation(byteCount: okCountMaxBytes, alignment: 8) { space in
            let written = writeOkCount(count, to: space.baseAddress!)
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: space[..<written]))
        }
    }

    /// The most bytes ``writeOkCount(_:to:)`` writes.
    public static let okCountMaxBytes = 26

    /// Writes `+OK <count>\n` at `destination` (room for ``okCountMaxBytes``); returns the bytes written. The reply
    /// to every `PUB` goes this way, with no buffer of its own.
    public static func writeOkCount(_ count: Int, to destination: UnsafeMutableRawPointer) -> Int {
        let prefix: StaticString = "+OK "
        destination.copyMemory(from: prefix.utf8Start, byteCount: 4)
        let digits = Decimal.write(count, to: destination + 4)
        destination.storeBytes(of: ASCII.lf, toByteOffset: 4 + digits, as: UInt8.self)
        return 4 + digits + 1
    }

    /// `+PONG\n`, or `+PONG <text>\n` when `text` is not nil or empty.
    public static func pong(_ text: String?, into buffer: inout [UInt8]) {
        appendASCII("+PONG", into: &buffer)
        appendOptionalText(text, into: &buffer)
    }

    /// `-ERR <CODE> <message>\n` (just `-ERR <CODE>\n` for an empty message).
    public static func error(_ error: ProtocolError, into buffer: inout [UInt8]) {
        appendASCII("-ERR ", into: &buffer)
        buffer.append(contentsOf: error.code.rawValue.utf8)
        appendOptionalText(error.message, into: &buffer)
    }

    /// `*<n>\n`, then each line followed by `\n`: the whole list in one go, so no push can split it.
    public static func list(_ lines: [String], into buffer: inout [UInt8]) {
        buffer.append(UInt8(ascii: "*"))
        Decimal.append(lines.count, into: &buffer)
        buffer.append(ASCII.lf)
        for line in lines {
            appendText(line, into: &buffer)
            buffer.append(ASCII.lf)
        }
    }

    /// `GONE <number>\n`.
    public static func gone(_ number: String, into buffer: inout [UInt8]) {
        appendASCII("GONE ", into: &buffer)
        buffer.append(contentsOf: number.utf8)
        buffer.append(ASCII.lf)
    }

    /// Appends ` <text>` (CR/LF as spaces) and LF, or only LF when text is nil or empty.
    private static func appendOptionalText(_ text: String?, into buffer: inout [UInt8]) {
        if let text, !text.isEmpty {
            buffer.append(ASCII.space)
            appendText(text, into: &buffer)
        }
        buffer.append(ASCII.lf)
    }

    /// Appends `text` with each CR and LF replaced by a space.
    private static func appendText(_ text: String, into buffer: inout [UInt8]) {
        let start = buffer.count
        buffer.append(contentsOf: text.utf8)
        for index in start..<buffer.count where buffer[index] == ASCII.lf || buffer[index] == ASCII.cr {
            buffer[index] = ASCII.space
        }
    }

    private static func appendASCII(_ text: StaticString, into buffer: inout [UInt8]) {
        buffer.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}
