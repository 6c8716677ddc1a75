/// One info pair of a publication (the notification's `userInfo`), as `PUB <number> <nbytes> <key>=<value>...`
/// attaches it and every `MSG` of the publication carries it (docs/PROTOCOL.md, Info pairs).
///
/// A key is 1 to 64 bytes of ASCII letters, digits, `_`, `-` and `.`, starting with a letter; a value is 1 to 1024
/// bytes with no space, no control character and no `=`. The server passes values on verbatim; by convention a
/// client percent-encodes a value that needs other bytes (see ``InfoPair/percentEncoded(_:)``).
public struct InfoPair: Equatable, Hashable, Sendable {
    /// The key, e.g. `unit`.
    public var key: String
    /// The value as sent, e.g. `EUR` (percent-encoded by convention when it needs to be).
    public var value: String

    /// A pair whose key and value are not checked; see ``check(key:value:)``.
    public init(key: String, value: String) {
        self.key = key
        self.value = value
    }

    /// At most this many pairs per publication.
    public static var maxCount: Int { WireLimits.maxInfoPairs }
    /// The longest key, in bytes.
    public static var maxKeyLength: Int { WireLimits.maxInfoKeyLength }
    /// The longest value, in bytes.
    public static var maxValueLength: Int { WireLimits.maxInfoValueLength }
    /// The server's own `MSG` keys; a publisher may not use them (nor any key starting with `$`).
    public static let reservedKeys: Set<String> = ["from", "rev", "group"]

    /// Why a pair was refused: a sentence fragment a person can act on.
    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// The key breaks the key rule.
        case badKey
        /// The key is one of the server's own.
        case reservedKey(String)
        /// The value breaks the value rule.
        case badValue
        /// More than ``InfoPair/maxCount`` pairs.
        case tooMany(Int)
        /// The same key twice.
        case duplicateKey(String)

        public var description: String {
            switch self {
            case .badKey:
                return "an info key must be 1 to \(InfoPair.maxKeyLength) ASCII letters, digits, '_', '-' or '.', "
                    + "starting with a letter"
            case .reservedKey(let key):
                return "the info key '\(key)' is the server's own (from, rev, group and keys starting with '$')"
            case .badValue:
                return "an info value must be 1 to \(InfoPair.maxValueLength) bytes of UTF-8 with no space, control "
                    + "character or '=' (percent-encode them)"
            case .tooMany(let count): return "\(count) info pairs (at most \(InfoPair.maxCount))"
            case .duplicateKey(let key): return "the info key '\(key)' is given twice"
            }
        }
    }

    /// Checks one key's bytes.
    public static func checkKey<Bytes: Collection>(_ key: Bytes) throws(Problem) where Bytes.Element == UInt8 {
        guard let first = key.first, key.count <= maxKeyLength, isLetter(first) else { throw .badKey }
        for byte in key
        where
            !(isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "."))
        {
            throw .badKey
        }
        if key.count <= 5, reservedKeys.contains(String(decoding: key, as: UTF8.self)) {
            throw .reservedKey(String(decoding: key, as: UTF8.self))
        }
    }

    /// Checks one value's bytes.
    public static func checkValue<Bytes: Collection>(_ value: Bytes) throws(Problem) where Bytes.Element == UInt8 {
        guard !value.isEmpty, value.count <= maxValueLength else { throw .badValue }
        var nonASCII = false
        for byte in value {
            if WordByte.isForbidden(byte) || byte == UInt8(ascii: "=") { throw .badValue }
            if byte >= 0x80 { nonASCII = true }
        }
        // Lines are UTF-8 (docs/PROTOCOL.md, Transport): a value that is not is refused, never altered.
        if nonASCII && !Names.isValidUTF8(value) { throw .badValue }
    }

    /// Checks a whole list: each pair, the count, and that no key repeats.
    public static func check(_ pairs: [InfoPair]) throws(Problem) {
        guard pairs.count <= maxCount else { throw .tooMany(pairs.count) }
        var seen = Set<String>()
        for pair in pairs {
            try checkKey(pair.key.utf8)
            try checkValue(pair.value.utf8)
            guard seen.insert(pair.key).inserted else { throw .duplicateKey(pair.key) }
        }
    }

    /// `value` with every byte a value may not hold (and `%` itself) written as `%XX`, so any text can travel.
    public static func percentEncoded(_ value: String) -> String {
        var out: [UInt8] = []
        for byte in value.utf8 {
            if WordByte.isForbidden(byte) || byte == UInt8(ascii: "=") || byte == UInt8(ascii: "%") {
                out += [UInt8(ascii: "%"), hexDigit(byte >> 4), hexDigit(byte & 0x0F)]
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `value` with `%XX` sequences decoded; nil when a `%` is not followed by two hex digits or the bytes are
    /// not UTF-8 (the value is then shown as sent).
    public static func percentDecoded(_ value: String) -> String? {
        var out: [UInt8] = []
        var bytes = value.utf8.makeIterator()
        while let byte = bytes.next() {
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                continue
            }
            guard let high = bytes.next().flatMap(hexValue), let low = bytes.next().flatMap(hexValue) else {
                return nil
            }
            out.append(high << 4 | low)
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
