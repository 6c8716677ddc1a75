/// The rules for subscription numbers and patterns (docs/PROTOCOL.md, Words).
///
/// A **number** is 1 to 200 bytes of UTF-8, case-sensitive, with no space and no ASCII control
/// character. Dots split it into tokens; no token is empty; `*` and `>` are not allowed as tokens.
/// A **pattern** is a number whose tokens may be wildcards: `*` matches exactly one token, `>`
/// (only as the last token) matches one or more tokens.
public enum Names {
    /// The longest number or pattern, in bytes.
    public static var maxLength: Int { WireLimits.maxNameLength }

    /// Why a name was refused. The description is a sentence fragment a person can act on.
    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// The name has no bytes.
        case empty
        /// The name is longer than ``Names/maxLength`` bytes.
        case tooLong(Int)
        /// The name holds a space or an ASCII control character.
        case forbiddenByte(UInt8)
        /// Two dots in a row, or a dot at either end.
        case emptyToken
        /// A `*` or `>` token where only literal tokens are allowed (a number, not a pattern).
        case wildcardInNumber
        /// A `>` token that is not the last one.
        case fullWildcardNotLast
        /// The bytes are not valid UTF-8.
        case invalidUTF8

        public var description: String {
            switch self {
            case .empty: return "is empty"
            case .tooLong(let n): return "is \(n) bytes long (at most \(Names.maxLength))"
            case .forbiddenByte(let byte): return WordByte.describe(byte)
            case .emptyToken: return "has an empty token (two dots in a row, or a dot at an end)"
            case .wildcardInNumber: return "has a wildcard token ('*' or '>'), which a number may not have"
            case .fullWildcardNotLast: return "has '>' before its last token"
            case .invalidUTF8: return "is not valid UTF-8"
            }
        }
    }

    /// Checks that `name` is a valid subscription number.
    public static func checkNumber(_ name: String) throws(Problem) {
        _ = try check(name.utf8, allowWildcards: false)
    }

    /// Checks that `pattern` is a valid pattern. Returns true when it holds a wildcard token.
    @discardableResult
    public static func checkPattern(_ pattern: String) throws(Problem) -> Bool {
        try check(pattern.utf8, allowWildcards: true)
    }

    /// Byte-level check of a number (`allowWildcards == false`) or a pattern. Returns whether a
    /// wildcard token was seen. UTF-8 validity is checked too, so raw socket bytes can be passed.
    @inlinable @discardableResult
    public static func check<Bytes: Collection>(
        _ bytes: Bytes,
        allowWildcards: Bool
    ) throws(Problem) -> Bool where Bytes.Element == UInt8 {
        let count = bytes.count
        if count == 0 { throw .empty }
        if count > maxLength { throw .tooLong(count) }
        var tokenLength = 0
        var tokenIsStar = false
        var tokenIsGreater = false
        var sawWildcard = false
        var nonASCII = false
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                if tokenLength == 0 { throw .emptyToken }
                if tokenIsStar || tokenIsGreater {
                    if !allowWildcards { throw .wildcardInNumber }
                    if tokenIsGreater { throw .fullWildcardNotLast }
                    sawWildcard = true
                }
                tokenLength = 0
                tokenIsStar = false
                tokenIsGreater = false
                continue
            }
            if WordByte.isForbidden(byte) { throw .forbiddenByte(byte) }
            if byte >= 0x80 { nonASCII = true }
            tokenLength += 1
            if tokenLength == 1 {
                tokenIsStar = byte == UInt8(ascii: "*")
                tokenIsGreater = byte == UInt8(ascii: ">")
            } else {
                tokenIsStar = false
                tokenIsGreater = false
            }
        }
        if tokenLength == 0 { throw .emptyToken }
        if tokenIsStar || tokenIsGreater {
            if !allowWildcards { throw .wildcardInNumber }
            sawWildcard = true
        }
        if nonASCII && !isValidUTF8(bytes) { throw .invalidUTF8 }
        return sawWildcard
    }

    /// Splits a valid number or pattern into its tokens, at the byte `.` (never inside a multi-byte character, and
    /// never merged with a following combining mark as a Character split would).
    public static func tokens(_ name: String) -> [Substring] {
        name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map { Substring($0) }
    }

    @usableFromInline
    static func isValidUTF8<Bytes: Collection>(_ bytes: Bytes) -> Bool where Bytes.Element == UInt8 {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }
}
