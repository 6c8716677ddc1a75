/// The rules for what the client writes into a control line: subjects, queue group names, header names and
/// values. A NATS subject is tokens split by `.`, none empty, with no space or control byte; `*` (one token) and
/// `>` (the last token: one or more) are wildcards, allowed only where the client subscribes.
public enum NATSSubject {
    /// Why a subject, queue name or header is not allowed; the text is quoted in ``NATSError``.
    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// Empty, or an empty token (`a..b`, `.a`, `a.`).
        case emptyToken
        /// A space, a control byte or DEL.
        case forbiddenByte
        /// A wildcard where a literal subject is needed (publish), or `>` that is not the last token, or a
        /// wildcard inside a token (`a*`).
        case misplacedWildcard

        public var description: String {
            switch self {
            case .emptyToken: return "is empty or has an empty token"
            case .forbiddenByte: return "has a space or control character"
            case .misplacedWildcard: return "has a wildcard where it may not"
            }
        }
    }

    /// Checks a subject; wildcards only when `allowWildcards` (a subscription), never in a published one.
    public static func check(_ subject: String, allowWildcards: Bool) throws(Problem) {
        var tokenStart = true
        var tokenLength = 0
        var wildcardToken = false
        var sawTail = false
        for byte in subject.utf8 {
            if sawTail { throw .misplacedWildcard }
            if byte == UInt8(ascii: ".") {
                guard tokenLength > 0 else { throw .emptyToken }
                tokenStart = true
                tokenLength = 0
                wildcardToken = false
                continue
            }
            guard !isForbidden(byte) else { throw .forbiddenByte }
            if byte == UInt8(ascii: "*") || byte == UInt8(ascii: ">") {
                guard tokenStart else { throw .misplacedWildcard }  // a*
                guard allowWildcards else { throw .misplacedWildcard }
                wildcardToken = true
                if byte == UInt8(ascii: ">") { sawTail = true }
            } else if wildcardToken {
                throw .misplacedWildcard  // *a
            }
            tokenStart = false
            tokenLength += 1
        }
        guard tokenLength > 0 else { throw .emptyToken }
    }

    /// Checks a queue group name: one or more bytes with no space or control byte.
    public static func checkQueue(_ queue: String) throws(Problem) {
        guard !queue.isEmpty else { throw .emptyToken }
        guard !queue.utf8.contains(where: isForbidden) else { throw .forbiddenByte }
    }

    /// Checks a header: a name of printable ASCII without `:` or space, a value without CR or LF.
    public static func checkHeader(_ field: NATSHeaders.Field) throws(Problem) {
        guard !field.name.isEmpty else { throw .emptyToken }
        guard field.name.utf8.allSatisfy(NATSHeaderBlock.isNameByte),
            !field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A })
        else { throw .forbiddenByte }
    }

    /// A space, a tab, another control byte or DEL.
    static func isForbidden(_ byte: UInt8) -> Bool { byte <= 0x20 || byte == 0x7F }
}
