extension Names {
    /// Whether `pattern` matches `number`, token by token: `*` matches exactly one token, `>` as the last token
    /// matches one or more tokens (so `>` alone matches every number), any other token must be equal byte for byte.
    ///
    /// Both names are expected to be valid (see ``checkPattern(_:)`` and ``checkNumber(_:)``); it allocates nothing.
    public static func matches(pattern: String, number: String) -> Bool {
        var patternRest: Substring.UTF8View? = pattern.utf8[...]
        var numberRest: Substring.UTF8View? = number.utf8[...]
        while let patternToken = nextToken(&patternRest) {
            guard let numberToken = nextToken(&numberRest) else { return false }
            if patternToken.count == 1 {
                let byte = patternToken[patternToken.startIndex]
                if byte == UInt8(ascii: ">") && patternRest == nil { return true }
                if byte == UInt8(ascii: "*") { continue }
            }
            if !patternToken.elementsEqual(numberToken) { return false }
        }
        return numberRest == nil
    }

    /// Cuts the next dot-separated token off `rest`; nil once the last token was taken.
    private static func nextToken(_ rest: inout Substring.UTF8View?) -> Substring.UTF8View? {
        guard let bytes = rest else { return nil }
        if let dot = bytes.firstIndex(of: UInt8(ascii: ".")) {
            rest = bytes[bytes.index(after: dot)...]
            return bytes[..<dot]
        }
        rest = nil
        return bytes
    }
}
