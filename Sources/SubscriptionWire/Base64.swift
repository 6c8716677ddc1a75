/// Standard base64 (RFC 4648 section 4, `+` and `/`, padded with `=`), written once for the targets without
/// Foundation: the fields of a stored secret hash, and `subctl`'s `payload_base64`.
public enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// `bytes` as padded base64.
    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let b0 = UInt32(bytes[index])
            let b1 = index + 1 < bytes.count ? UInt32(bytes[index + 1]) : 0
            let b2 = index + 2 < bytes.count ? UInt32(bytes[index + 2]) : 0
            let group = b0 << 16 | b1 << 8 | b2
            out.append(alphabet[Int(group >> 18 & 63)])
            out.append(alphabet[Int(group >> 12 & 63)])
            out.append(index + 1 < bytes.count ? alphabet[Int(group >> 6 & 63)] : UInt8(ascii: "="))
            out.append(index + 2 < bytes.count ? alphabet[Int(group & 63)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of padded base64 `text`; nil unless it is exactly what ``encode(_:)`` writes (length a multiple of
    /// 4, only alphabet characters before at most two `=`, unused bits zero), so a stored hash has one spelling.
    public static func decode(_ text: Substring) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(characters.count / 4 * 3)
        var start = 0
        while start < characters.count {
            let isLast = start + 4 == characters.count
            var group: UInt32 = 0
            var padding = 0
            for offset in 0..<4 {
                let character = characters[start + offset]
                if character == UInt8(ascii: "=") {
                    // Padding only at the end of the last group, in its last one or two places.
                    guard isLast, offset >= 2 else { return nil }
                    padding += 1
                    group <<= 6
                    continue
                }
                guard padding == 0, let value = value(of: character) else { return nil }
                group = group << 6 | UInt32(value)
            }
            out.append(UInt8(group >> 16 & 0xFF))
            if padding < 2 { out.append(UInt8(group >> 8 & 0xFF)) }
            if padding < 1 { out.append(UInt8(group & 0xFF)) }
            // Bits the padding leaves unused must be zero.
            if padding == 2 && group & 0xFFFF != 0 { return nil }
            if padding == 1 && group & 0xFF != 0 { return nil }
            start += 4
        }
        return out
    }

    /// The 6-bit value of one base64 character, nil for any other byte.
    private static func value(of character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return character - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return character - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return character - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }
}
