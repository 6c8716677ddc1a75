import COpenSSL

/// The `Sec-WebSocket-Key` rules and the `Sec-WebSocket-Accept` answer (RFC 6455 section 4.2.2), with OpenSSL's
/// SHA-1 and Base64 encoder (libcrypto, already linked for the users' secret hashes and TLS).
enum WebSocketAcceptKey {
    /// The GUID RFC 6455 appends to the client's key.
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// True when `key` is the Base64 of exactly 16 bytes: 22 characters of the Base64 alphabet, then `==`. Like
    /// Python's websockets (`b64decode(validate=True)`), the unused low bits of the last character are not checked;
    /// no blank or line break is allowed inside.
    static func isValid(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard bytes.count == 24, bytes[22] == UInt8(ascii: "="), bytes[23] == UInt8(ascii: "=") else { return false }
        return bytes[0..<22].allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
                return true
            default:
                return false
            }
        }
    }

    /// `Sec-WebSocket-Accept` for `key`: Base64 of the SHA-1 of the key followed by ``guid``.
    static func accept(for key: String) -> String {
        let input = Array((key + guid).utf8)
        var digest = [UInt8](repeating: 0, count: 20)
        var digestCount: UInt32 = 0
        let hashed = input.withUnsafeBytes { data in
            EVP_Digest(data.baseAddress, data.count, &digest, &digestCount, EVP_sha1(), nil)
        }
        precondition(hashed == 1 && digestCount == 20, "OpenSSL's SHA-1 failed")
        // 4 characters per 3 bytes, and the NUL EVP_EncodeBlock writes after them.
        var text = [UInt8](repeating: 0, count: 29)
        let written = EVP_EncodeBlock(&text, digest, 20)
        precondition(written == 28, "OpenSSL's Base64 wrote \(written) characters for 20 bytes")
        return String(decoding: text[0..<28], as: UTF8.self)
    }
}
