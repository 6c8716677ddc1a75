/// The bytes no word of the protocol may hold: a space (words are split at spaces), an ASCII control character
/// (a line ends at LF) or DEL. Numbers, patterns, client names, tokens and info values all obey it.
@usableFromInline
enum WordByte {
    /// Whether `byte` may not stand in a word.
    @inlinable
    static func isForbidden(_ byte: UInt8) -> Bool { byte <= 0x20 || byte == 0x7F }

    /// `holds a space` or `holds the control character 0x9`, for a problem's description.
    static func describe(_ byte: UInt8) -> String {
        byte == 0x20 ? "holds a space" : "holds the control character 0x\(String(byte, radix: 16))"
    }
}
