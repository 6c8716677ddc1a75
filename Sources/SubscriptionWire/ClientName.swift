/// The rule for client names: `HELLO name=`, `SUB ... from=` and (protocol 1.1) group names are 1 to 64 bytes of
/// valid UTF-8 with no space and no ASCII control character. The `HELLO token=` secret is the same kind of word
/// with no length limit (``checkToken(_:)``).
public enum ClientName {
    /// The longest client name, in bytes.
    public static var maxLength: Int { WireLimits.maxClientNameLength }

    /// Why a client name or token was refused. The description is a sentence fragment a person can act on.
    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// The word has no bytes.
        case empty
        /// The name is longer than ``ClientName/maxLength`` bytes.
        case tooLong(Int)
        /// The word holds a space or an ASCII control character.
        case forbiddenByte(UInt8)
        /// The bytes are not valid UTF-8.
        case invalidUTF8

        public var description: String {
            switch self {
            case .empty: return "is empty"
            case .tooLong(let n): return "is \(n) bytes long (at most \(ClientName.maxLength))"
            case .forbiddenByte(let byte): return WordByte.describe(byte)
            case .invalidUTF8: return "is not valid UTF-8"
            }
        }
    }

    /// Checks that `name` is a valid client name.
    public static func check(_ name: String) throws(Problem) {
        try checkBytes(name.utf8, maxLength: maxLength)
    }

    /// Checks that `token` is a valid `HELLO token=` secret: a client name without the length limit.
    public static func checkToken(_ token: String) throws(Problem) {
        try checkBytes(token.utf8, maxLength: .max)
    }

    /// The name in `bytes`, or nil when it breaks the rule.
    public static func validate(_ bytes: ArraySlice<UInt8>) -> String? {
        guard !bytes.isEmpty && bytes.count <= maxLength else { return nil }
        return printableUTF8(bytes)
    }

    /// `bytes` as a String when they are valid UTF-8 with no space or control byte, else nil.
    public static func printableUTF8(_ bytes: ArraySlice<UInt8>) -> String? {
        for byte in bytes where WordByte.isForbidden(byte) { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func checkBytes<Bytes: Collection>(_ bytes: Bytes, maxLength: Int) throws(Problem)
    where Bytes.Element == UInt8 {
        let count = bytes.count
        if count == 0 { throw .empty }
        if count > maxLength { throw .tooLong(count) }
        if let byte = bytes.first(where: WordByte.isForbidden) { throw .forbiddenByte(byte) }
        if String(validating: bytes, as: UTF8.self) == nil { throw .invalidUTF8 }
    }
}
