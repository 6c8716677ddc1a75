import Glibc
import SubscriptionClient
import SubscriptionWire

/// The `listen --json` line of a message: `{"number":"SCIENCE","payload":"V1.0","from":"alice",`
/// `"info":{"unit":"EUR"},"received_at":"2026-11-21T20:26:00.123Z"}`.
/// A payload that is not valid UTF-8 is written as `"payload_base64"` instead of `"payload"`; `from` is null
/// when the publisher did not name itself; `info` is always there (`{}` without info pairs), its keys in the
/// publisher's order and its values percent-decoded (a value that does not decode is shown as sent).
enum JSONLine {
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

    /// The current UTC time in ISO 8601 with milliseconds, e.g. `2026-11-21T20:26:00.123Z`.
    static func now() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = spec.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return "\(pad(Int(parts.tm_year) + 1900, 4))-\(pad(Int(parts.tm_mon) + 1, 2))-\(pad(Int(parts.tm_mday), 2))"
            + "T\(pad(Int(parts.tm_hour), 2)):\(pad(Int(parts.tm_min), 2)):\(pad(Int(parts.tm_sec), 2))"
            + ".\(pad(Int(spec.tv_nsec) / 1_000_000, 3))Z"
    }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\u00" + hexByte(UInt8(scalar.value))
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// Standard base64 with padding.
    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
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

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    private static func hexByte(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 15)]], as: UTF8.self)
    }
}
