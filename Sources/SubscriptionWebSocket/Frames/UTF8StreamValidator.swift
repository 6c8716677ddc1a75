/// Checks that bytes arriving in pieces are UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above
/// U+10FFFF), keeping what it needs of a character split between pieces. A plain value; a text message holds one
/// across its fragments.
struct UTF8StreamValidator {
    /// Continuation bytes still expected for the character in progress (0 between characters).
    private var needed: UInt8 = 0
    /// The range the next continuation byte must fall in: narrower than 0x80...0xBF right after E0, ED, F0 and F4.
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// True when no character is left half done: a message may end here.
    var isAtCharacterBoundary: Bool { needed == 0 }

    /// Checks `bytes` as the next piece of the stream. Returns nil when they are valid so far, or the offset of the
    /// first byte that cannot be UTF-8 here (the validator is then of no further use).
    mutating func validate(_ bytes: UnsafeRawBufferPointer) -> Int? {
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if needed > 0 {
                guard byte >= lower && byte <= upper else { return index }
                needed -= 1
                lower = 0x80
                upper = 0xBF
                index += 1
                continue
            }
            if byte < 0x80 {
                index += 1
                // ASCII runs, eight bytes at a time.
                while index + 8 <= count
                    && bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                        & 0x8080_8080_8080_8080 == 0
                {
                    index += 8
                }
                continue
            }
            switch byte {
            case 0xC2...0xDF: needed = 1
            case 0xE0: (needed, lower) = (2, 0xA0)
            case 0xE1...0xEC, 0xEE...0xEF: needed = 2
            case 0xED: (needed, upper) = (2, 0x9F)
            case 0xF0: (needed, lower) = (3, 0x90)
            case 0xF1...0xF3: needed = 3
            case 0xF4: (needed, upper) = (3, 0x8F)
            default: return index
            }
            index += 1
        }
        return nil
    }
}
