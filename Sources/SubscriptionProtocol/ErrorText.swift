import SubscriptionWire

/// Builds the messages of the parser's errors. Bytes from the peer are quoted with control bytes shown as `?`
/// and cut to a few dozen bytes, so an error line stays short and printable.
enum ErrorText {
    /// `bytes` as text for a message: at most `limit` bytes (then `...`), control bytes as `?`, invalid UTF-8
    /// repaired.
    static func quote(_ bytes: ArraySlice<UInt8>, limit: Int) -> String {
        var shown = Array(bytes.prefix(limit))
        for index in shown.indices where shown[index] < 0x20 || shown[index] == 0x7F {
            shown[index] = UInt8(ascii: "?")
        }
        let text = String(decoding: shown, as: UTF8.self)
        return bytes.count > limit ? text + "..." : text
    }

    static func unknownVerb(_ verb: ArraySlice<UInt8>) -> ProtocolError {
        ProtocolError(.unknown, "unknown command '\(quote(verb, limit: 32))'")
    }

    static func missingArgument(_ verb: Verb) -> ProtocolError {
        ProtocolError(.proto, "missing argument; usage: \(verb.usage)")
    }

    static func extraArgument(_ verb: Verb) -> ProtocolError {
        ProtocolError(.proto, "too many arguments; usage: \(verb.usage)")
    }

    static func unexpectedArgument(_ verb: Verb, _ word: ArraySlice<UInt8>) -> ProtocolError {
        ProtocolError(.proto, "unexpected argument '\(quote(word, limit: 32))'; usage: \(verb.usage)")
    }

    static func unknownKey(_ verb: Verb, _ key: ArraySlice<UInt8>) -> ProtocolError {
        ProtocolError(.proto, "unknown key '\(quote(key, limit: 32))='; usage: \(verb.usage)")
    }

    static func repeatedKey(_ verb: Verb, _ key: String) -> ProtocolError {
        ProtocolError(.proto, "\(key)= given more than once; usage: \(verb.usage)")
    }

    static func invalidClientName(_ bytes: ArraySlice<UInt8>) -> ProtocolError {
        ProtocolError(
            .proto,
            "invalid client name '\(quote(bytes, limit: 80))': "
                + "it must be 1 to \(ClientName.maxLength) bytes of UTF-8 with no space or control character"
        )
    }

    /// The token is a secret: it is never quoted.
    static let invalidToken = ProtocolError(
        .proto,
        "invalid token: it must be at least 1 byte of UTF-8 with no space or control character"
    )

    static func invalidPayloadSize(_ bytes: ArraySlice<UInt8>) -> ProtocolError {
        ProtocolError(
            .proto,
            "invalid payload size '\(quote(bytes, limit: 32))': it must be ASCII digits; usage: \(Verb.pub.usage)"
        )
    }

    static func payloadTooBig(_ size: ArraySlice<UInt8>, limit: Int) -> ProtocolError {
        ProtocolError(
            .tooBig, "payload of \(quote(size, limit: 32)) bytes is over the limit of \(limit) bytes",
            closesConnection: true)
    }

    static func malformedInfoPair(_ word: ArraySlice<UInt8>) -> ProtocolError {
        ProtocolError(.proto, "'\(quote(word, limit: 32))' is not an info pair <key>=<value>; usage: \(Verb.pub.usage)")
    }

    static func infoPair(_ problem: InfoPair.Problem) -> ProtocolError {
        ProtocolError(.proto, "\(problem)")
    }

    static func textTooBig(_ count: Int, limit: Int) -> ProtocolError {
        ProtocolError(.tooBig, "text of \(count) bytes is over the limit of \(limit) bytes", closesConnection: true)
    }

    static let missingSendText = ProtocolError(
        .proto,
        "missing text (one space after the number, then the text); usage: \(Verb.send.usage)"
    )
}

extension CommandParser {
    /// The `NAME` error for an invalid number or pattern (`kind` is "number" or "pattern").
    static func invalidName(_ kind: String, _ bytes: ArraySlice<UInt8>, _ problem: Names.Problem) -> ProtocolError {
        ProtocolError(.name, "invalid \(kind) '\(ErrorText.quote(bytes, limit: 64))': \(problem)")
    }
}
