/// The rule for the client names of `HELLO name=` and `SUB ... from=`: 1 to 64 bytes of valid UTF-8 with no
/// space and no ASCII control character.
enum ClientName {
    /// The longest client name, in bytes.
    static let maxLength = 64

    /// The name in `bytes`, or nil when it breaks the rule.
    static func validate(_ bytes: ArraySlice<UInt8>) -> String? {
        guard !bytes.isEmpty && bytes.count <= maxLength else { return nil }
        return printableUTF8(bytes)
    }

    /// `bytes` as a String when they are valid UTF-8 with no space or control byte, else nil.
    static func printableUTF8(_ bytes: ArraySlice<UInt8>) -> String? {
        for byte in bytes where byte <= ASCII.space || byte == 0x7F { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}
