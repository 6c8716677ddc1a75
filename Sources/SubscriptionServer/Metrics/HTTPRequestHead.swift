import SubscriptionWire

/// The head of an HTTP/1.x request: its request line and header fields (RFC 9112), as far as the metrics endpoint
/// needs them.
struct HTTPRequestHead: Equatable {
    /// One header field, its name as sent (compare it case-insensitively) and its value without surrounding blanks:
    /// the wire's one header field type, as a WebSocket upgrade request's.
    typealias Field = HeaderField

    /// The method, e.g. `GET` (case-sensitive, as RFC 9110 says).
    var method: String
    /// The request target as sent, e.g. `/metrics?x=1`.
    var target: String
    /// The `x` of `HTTP/1.x`.
    var minorVersion: Int
    /// The header fields, in order.
    var fields: [Field]

    /// The target's path: up to a `?` or `#`.
    var path: Substring {
        target.prefix(while: { $0 != "?" && $0 != "#" })
    }
}

/// Why a request head cannot be served.
enum HTTPRequestHeadError: Error, Equatable {
    /// Not HTTP/1.x syntax: 400 Bad Request, with what was wrong.
    case malformed(String)
    /// The head passed the size limit before it ended: 431 Request Header Fields Too Large.
    case tooLarge
    /// An HTTP version other than 1.x: 505 HTTP Version Not Supported.
    case unsupportedVersion
}

/// An incremental parser of one request head, fed the bytes as they arrive (whole, in chunks, a byte at a time) and
/// answering the same in every case. A plain value: each byte is looked at once as it is added to the current line
/// and once when its line is checked; a line is never rescanned for its end. The request line is checked as soon as
/// it ends, so garbage is refused without waiting for the rest of the head.
///
/// Accepted, as RFC 9112 allows: empty lines before the request line, and lines ending in a bare LF. Refused: a bare
/// CR, a field line starting with a blank (obsolete line folding), blanks before a field's colon, control bytes,
/// an HTTP/1.1 request without exactly one `Host` field.
struct HTTPRequestHeadParser {
    /// What the bytes so far amount to.
    enum Outcome: Equatable {
        /// The head has not ended yet.
        case needMore
        /// The head ended; bytes after it (a body, a next request) are not the parser's.
        case complete(HTTPRequestHead)
        /// The head cannot be served.
        case failed(HTTPRequestHeadError)
    }

    /// The most bytes a head may take, its final empty line included.
    let maxHeadBytes: Int
    /// Where it stands.
    private(set) var outcome = Outcome.needMore
    private var line: [UInt8] = []
    /// The bytes taken so far, the head's last byte included once it is complete (what follows is not the head's).
    private(set) var headBytes = 0
    private var requestLine: (method: String, target: String, minorVersion: Int)?
    private var fields: [HTTPRequestHead.Field] = []

    /// A parser that refuses a head longer than `maxHeadBytes`.
    init(maxHeadBytes: Int) {
        self.maxHeadBytes = maxHeadBytes
    }

    /// Takes the next bytes of the request. Once the outcome is no longer ``Outcome/needMore`` the rest is ignored.
    @discardableResult
    mutating func consume<Bytes: Sequence>(_ bytes: Bytes) -> Outcome where Bytes.Element == UInt8 {
        guard outcome == .needMore else { return outcome }
        for byte in bytes {
            headBytes += 1
            guard headBytes <= maxHeadBytes else {
                outcome = .failed(.tooLarge)
                return outcome
            }
            guard byte == UInt8(ascii: "\n") else {
                line.append(byte)
                continue
            }
            if line.last == UInt8(ascii: "\r") { line.removeLast() }
            endLine()
            line.removeAll(keepingCapacity: true)
            if outcome != .needMore { return outcome }
        }
        return outcome
    }

    // MARK: Lines

    private mutating func endLine() {
        if line.contains(UInt8(ascii: "\r")) { return fail("a CR not followed by LF") }
        guard let request = requestLine else {
            // Empty lines before the request line are skipped (RFC 9112 2.2).
            if !line.isEmpty { takeRequestLine() }
            return
        }
        guard !line.isEmpty else { return finish(request) }
        takeField()
    }

    /// `method SP request-target SP HTTP/1.x`.
    private mutating func takeRequestLine() {
        let parts = line.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false)
        guard parts.count == 3 else { return fail("the request line is not 'METHOD TARGET HTTP/1.x'") }
        let (method, target, version) = (parts[0], parts[1], parts[2])
        guard !method.isEmpty, method.allSatisfy(Self.isTokenByte) else { return fail("the method is not a token") }
        guard !target.isEmpty, target.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return fail("the request target is empty or holds a byte other than visible ASCII")
        }
        guard version.count == 8, version.starts(with: "HTTP/".utf8), Self.isDigit(version[version.startIndex + 5]),
            version[version.startIndex + 6] == UInt8(ascii: "."), Self.isDigit(version[version.startIndex + 7])
        else { return fail("the version is not HTTP/x.y") }
        guard version[version.startIndex + 5] == UInt8(ascii: "1") else {
            outcome = .failed(.unsupportedVersion)
            return
        }
        requestLine = (
            String(decoding: method, as: UTF8.self), String(decoding: target, as: UTF8.self),
            Int(version[version.startIndex + 7] - UInt8(ascii: "0"))
        )
    }

    /// `field-name ":" OWS field-value OWS`.
    private mutating func takeField() {
        if line[0] == UInt8(ascii: " ") || line[0] == UInt8(ascii: "\t") {
            return fail("obsolete line folding")
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0,
            line[..<colon].allSatisfy(Self.isTokenByte)
        else { return fail("a header field line is not 'Name: value'") }
        var value = line[(colon + 1)...]
        while let first = value.first, Self.isBlank(first) { value.removeFirst() }
        while let last = value.last, Self.isBlank(last) { value.removeLast() }
        guard value.allSatisfy({ $0 == UInt8(ascii: "\t") || ($0 >= 0x20 && $0 != 0x7F) }) else {
            return fail("a header field value holds a control byte")
        }
        let name = String(decoding: line[..<colon], as: UTF8.self)
        fields.append(.init(name: name, value: String(decoding: value, as: UTF8.self)))
    }

    private mutating func finish(_ request: (method: String, target: String, minorVersion: Int)) {
        if request.minorVersion >= 1 {
            let hosts = fields.count(where: { $0.name.lowercased() == "host" })
            guard hosts == 1 else { return fail("an HTTP/1.1 request needs exactly one Host field, got \(hosts)") }
        }
        outcome = .complete(
            HTTPRequestHead(
                method: request.method, target: request.target, minorVersion: request.minorVersion, fields: fields))
    }

    private mutating func fail(_ reason: String) {
        outcome = .failed(.malformed(reason))
    }

    // MARK: Bytes

    /// RFC 9110 `tchar`.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }
}
