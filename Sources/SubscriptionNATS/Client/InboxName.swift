/// Unique subject names for replies: `_INBOX.<22 random letters and digits>` (as NATS clients name theirs).
enum InboxName {
    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    /// A new inbox prefix, `_INBOX.xxxxxxxxxxxxxxxxxxxxxx`.
    static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = Array("_INBOX.".utf8)
        for _ in 0..<22 { bytes.append(alphabet[Int(generator.next(upperBound: UInt64(alphabet.count)))]) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
