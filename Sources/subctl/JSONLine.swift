import Glibc
import SubscriptionClient
import SubscriptionWire

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The `listen --json` line of a message: `{"number":"SCIENCE","payload":"V1.0","from":"alice",`
/// `"info":{"unit":"EUR"},"received_at":"2026-11-21T20:26:00.123Z"}`.
/// A payload that is not valid UTF-8 is written as `"payload_base64"` instead of `"payload"`; `from` is null
/// when the publisher did not name itself; `info` is always there (`{}` without info pairs), its keys in the
/// publisher's order and its values percent-decoded (a value that does not decode is shown as sent).
enum JSONLine {
    /// `text` as a JSON string (the one escaping rule, ``JSONText/quoted(_:)``).
    static func quoted(_ text: String) -> String { JSONText.quoted(text) }

    static func encode(_ message: ReceivedMessage, receivedAt: String) -> String {
        var out = "{\"number\":" + quoted(message.number)
        if let text = message.text {
            out += ",\"payload\":" + quoted(text)
        } else {
            out += ",\"payload_base64\":\"" + base64(message.payload) + "\""
        }
        out += ",\"from\":" + (message.from.map(quoted) ?? "null")
        out += ",\"info\":" + infoObject(message.infoPairs)
        out += ",\"received_at\":\"" + receivedAt + "\"}"
        return out
    }

    /// The pairs as a JSON object, in order, values percent-decoded; a key that came twice keeps its first value.
    static func infoObject(_ pairs: [InfoPair]) -> String {
        var seen = Set<String>()
        var members: [String] = []
        for pair in pairs where seen.insert(pair.key).inserted {
            members.append(quoted(pair.key) + ":" + quoted(InfoPair.percentDecoded(pair.value) ?? pair.value))
        }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// Standard base64 with padding (RFC 4648 section 4), with Foundation's encoder.
    static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
}
