/// Encodes the commands of PROTOCOL.md into the bytes sent on the wire, after checking that every
/// word can be sent as one word (no space, no control character, so no line feed can be smuggled in).
enum Command {
    /// The longest number or pattern the protocol allows, in bytes.
    static let maxNameLength = 200

    static func hello(name: String?, token: String?) throws(ClientError) -> [UInt8] {
        var line = "HELLO"
        if let name {
            try checkWord(name, what: "client name")
            line += " name=\(name)"
        }
        if let token {
            try checkWord(token, what: "token")
            line += " token=\(token)"
        }
        return bytes(line)
    }

    static func create(_ number: String) throws(ClientError) -> [UInt8] {
        try checkName(number, what: "number")
        return bytes("CREATE \(number)")
    }

    static func remove(_ number: String) throws(ClientError) -> [UInt8] {
        try checkName(number, what: "number")
        return bytes("REMOVE \(number)")
    }

    static func sub(_ pattern: String, from: String?) throws(ClientError) -> [UInt8] {
        try checkName(pattern, what: "pattern")
        guard let from else { return bytes("SUB \(pattern)") }
        try checkWord(from, what: "publisher name")
        return bytes("SUB \(pattern) from=\(from)")
    }

    static func unsub(_ pattern: String) -> [UInt8] {
        bytes("UNSUB \(pattern)")
    }

    /// `PUB <number> <nbytes>` LF payload LF, in one buffer.
    static func pub(_ number: String, _ payload: [UInt8]) throws(ClientError) -> [UInt8] {
        try checkName(number, what: "number")
        var out = Array("PUB \(number) \(payload.count)\n".utf8)
        out.reserveCapacity(out.count + payload.count + 1)
        out.append(contentsOf: payload)
        out.append(UInt8(ascii: "\n"))
        return out
    }

    static func list(_ pattern: String?) throws(ClientError) -> [UInt8] {
        guard let pattern else { return bytes("LIST") }
        try checkName(pattern, what: "pattern")
        return bytes("LIST \(pattern)")
    }

    static let stats = bytes("STATS")
    static let ping = bytes("PING")
    static let quit = bytes("QUIT")

    /// Checks a number or pattern: what the wire needs, plus the protocol's length limit. The server checks
    /// the rest (dots, wildcards) and answers `-ERR NAME`.
    static func checkName(_ name: String, what: String) throws(ClientError) {
        try checkWord(name, what: what)
        let length = name.utf8.count
        guard length <= maxNameLength else {
            throw .invalidArgument("the \(what) is \(length) bytes long (at most \(maxNameLength))")
        }
    }

    /// Checks that `word` is non-empty and holds no space and no ASCII control character.
    static func checkWord(_ word: String, what: String) throws(ClientError) {
        guard !word.isEmpty else { throw .invalidArgument("the \(what) is empty") }
        guard !word.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw .invalidArgument("the \(what) '\(word)' holds a space or a control character")
        }
    }

    private static func bytes(_ line: String) -> [UInt8] {
        var out = Array(line.utf8)
        out.append(UInt8(ascii: "\n"))
        return out
    }
}
