/// A small JSON reader (RFC 8259) over bytes: no Foundation on the connection's path. It reads the one-line JSON
/// objects of `INFO` and of JetStream's API replies.
///
/// Strict where it matters for safety (nesting at most ``maxDepth`` deep, no trailing bytes but whitespace, valid
/// escapes, surrogate pairs joined, lone surrogates refused) and nothing more: numbers are checked for their
/// grammar and kept as text.
public struct JSONReader {
    /// Why a text is not JSON: what was expected and the byte offset where.
    public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// What was wrong, e.g. `expected ':'`.
        public var reason: String
        /// The byte offset in the input.
        public var offset: Int

        public var description: String { "\(reason) at byte \(offset)" }
    }

    /// Objects and arrays nested deeper than this are refused (the reader recurses once per level).
    public static let maxDepth = 64

    /// The input. Valid only while ``parseResult(_:)`` runs: a reader is made there, inside the closure that lends
    /// the bytes, and never escapes it (the initializer is private).
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    private init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Parses `bytes` as one JSON value with nothing after it but whitespace.
    public static func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(Failure) -> JSONValue {
        let result: Result<JSONValue, Failure>? = bytes.withContiguousStorageIfAvailable { buffer in
            parseResult(UnsafeRawBufferPointer(buffer))
        }
        let outcome = result ?? Array(bytes).withUnsafeBytes { parseResult($0) }
        return try outcome.get()
    }

    /// Parses the UTF-8 of `text`.
    public static func parse(_ text: String) throws(Failure) -> JSONValue {
        try parse(Array(text.utf8))
    }

    private static func parseResult(_ buffer: UnsafeRawBufferPointer) -> Result<JSONValue, Failure> {
        var reader = JSONReader(buffer)
        do throws(Failure) {
            let value = try reader.value(depth: 0)
            reader.skipWhitespace()
            guard reader.index == buffer.count else { throw reader.failure("unexpected bytes after the value") }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    // MARK: Values

    private mutating func value(depth: Int) throws(Failure) -> JSONValue {
        skipWhitespace()
        guard let byte = peek() else { throw failure("expected a value") }
        switch byte {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw failure("expected a value")
        }
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= Self.maxDepth else { throw failure("nested deeper than \(Self.maxDepth)") }
        index += 1  // {
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw failure("expected a member name") }
            let key = try string()
            skipWhitespace()
            try expect(":")
            members[key] = try value(depth: depth)
            skipWhitespace()
            if peek() == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try expect("}")
            return .object(members)
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= Self.maxDepth else { throw failure("nested deeper than \(Self.maxDepth)") }
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            elements.append(try value(depth: depth))
            skipWhitespace()
            if peek() == UInt8(ascii: ",") {
                index += 1
                continue
            }
            try expect("]")
            return .array(elements)
        }
    }

    private mutating func number() throws(Failure) -> String {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), isDigit(first) else { throw failure("expected a digit") }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard let digit = peek(), isDigit(digit) else { throw failure("expected a digit after '.'") }
            skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard let digit = peek(), isDigit(digit) else { throw failure("expected a digit in the exponent") }
            skipDigits()
        }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
    }

    private mutating func string() throws(Failure) -> String {
        index += 1  // "
        var scalars = String.UnicodeScalarView()
        var runStart = index
        while true {
            guard let byte = peek() else { throw failure("unterminated string") }
            if byte == UInt8(ascii: "\"") {
                flushRun(from: runStart, into: &scalars)
                index += 1
                return String(scalars)
            }
            if byte < 0x20 { throw failure("control byte in a string") }
            if byte == UInt8(ascii: "\\") {
                flushRun(from: runStart, into: &scalars)
                index += 1
                scalars.append(try escape())
                runStart = index
                continue
            }
            index += 1
        }
    }

    /// Appends the unescaped bytes `runStart..<index` (decoded as UTF-8, invalid sequences replaced).
    private func flushRun(from runStart: Int, into scalars: inout String.UnicodeScalarView) {
        guard runStart < index else { return }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[runStart..<index]), as: UTF8.self)
        scalars.append(contentsOf: text.unicodeScalars)
    }

    private mutating func escape() throws(Failure) -> Unicode.Scalar {
        guard let byte = peek() else { throw failure("unterminated escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "u"):
            let unit = try hex4()
            if (0xD800...0xDBFF).contains(unit) {
                guard peek() == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u")
                else { throw failure("a high surrogate without its low one") }
                index += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw failure("a high surrogate without its low one") }
                return Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))!
            }
            guard let scalar = Unicode.Scalar(unit) else { throw failure("a lone low surrogate") }
            return scalar
        default:
            throw failure("invalid escape")
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("expected 4 hex digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("expected 4 hex digits")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    // MARK: Bytes

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = peek(), isDigit(byte) { index += 1 }
    }

    private mutating func skipWhitespace() {
        while let byte = peek(), byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw failure("expected \(word)") }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
            throw failure("expected \(word)")
        }
        index += count
    }

    private mutating func expect(_ character: Unicode.Scalar) throws(Failure) {
        guard peek() == UInt8(ascii: character) else { throw failure("expected '\(character)'") }
        index += 1
    }

    private func failure(_ reason: String) -> Failure { Failure(reason: reason, offset: index) }
}
