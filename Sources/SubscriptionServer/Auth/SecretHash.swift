import COpenSSL
import SubscriptionWire

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A user's secret as the config file stores it: never the secret itself, but PBKDF2-HMAC-SHA256 of it with a random
/// salt, written `pbkdf2-sha256$<iterations>$<salt base64>$<hash base64>` (Django's layout), e.g.
/// `pbkdf2-sha256$100000$tFgG//VggKAimAQcLvDBQA==$YgeXAkvdqkZpfxiJtIWaJP+T3Gej5jLzJNDsYlJPLds=` for `pw`.
/// `subd hash-secret` makes one from a secret on stdin.
///
/// ``verify(_:)`` derives the hash of the secret a `HELLO` presents with the stored salt and count, and compares the
/// two in constant time (OpenSSL's `CRYPTO_memcmp`).
public struct SecretHash: Sendable, Equatable, CustomStringConvertible {
    /// The algorithm name, the first field of ``encoded``.
    public static let algorithm = "pbkdf2-sha256"
    /// The PBKDF2 iterations of a new hash: one ``verify(_:)`` takes about 30 ms on a 2-core AMD EPYC VM, in release
    /// and in debug builds alike (the work is all OpenSSL's): 29 ms in-process in a debug test, 32 ms for
    /// `subd hash-secret` less `subd --version` in either build, 29 ms for the bare `PKCS5_PBKDF2_HMAC` call. A
    /// `HELLO` checks it on a worker thread, one at a time (``HelloCommand``), so the event loop never waits for it;
    /// each guess at a stolen hash costs as much. 200,000 took 58 ms, 150,000 took 44 ms.
    public static let defaultIterations = 100_000
    /// The iteration counts a hash may have: fewer would make a stolen hash cheap to attack, more would let one
    /// `HELLO` hold the worker that checks secrets (and every login behind it) for a third of a second or longer.
    public static let iterationRange = 10_000...1_000_000
    /// Bytes of random salt in a new hash (a stored one may have 8 to 64).
    public static let saltLength = 16
    /// Bytes of the derived hash (SHA-256's output).
    public static let hashLength = 32

    /// Why a secret could not be hashed or a stored hash could not be read. The description is a sentence fragment a
    /// person can act on.
    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// The secret is not one `HELLO token=` can carry (empty, a space, a control byte, invalid UTF-8).
        case unusableSecret(ClientName.Problem)
        /// The text does not have four `$`-separated fields; the count found.
        case fieldCount(Int)
        /// The first field is not ``SecretHash/algorithm`` (not repeated in the message: it may be a clear secret).
        case unknownAlgorithm
        /// The iteration count is not a whole number in ``SecretHash/iterationRange``.
        case iterations(String)
        /// The salt is not padded base64 of 8 to 64 bytes.
        case salt
        /// The hash is not padded base64 of ``SecretHash/hashLength`` bytes.
        case hash
        /// OpenSSL could not make random salt or derive the hash (its error queue says why).
        case openSSL(String)

        public var description: String {
            let layout = "\(SecretHash.algorithm)$<iterations>$<salt base64>$<hash base64>"
            switch self {
            case .unusableSecret(let problem): return "the secret \(problem): HELLO token= could not carry it"
            case .fieldCount(let count):
                return "has \(count) '$'-separated fields, not the 4 of \(layout) (make one with `subd hash-secret`)"
            case .unknownAlgorithm: return "does not start with \(SecretHash.algorithm)$, the only algorithm subd knows"
            case .iterations(let text):
                let range = SecretHash.iterationRange
                return "has the iteration count '\(text)', not a whole number from \(range.lowerBound) to "
                    + "\(range.upperBound)"
            case .salt: return "has a salt that is not padded base64 of 8 to 64 bytes"
            case .hash: return "has a hash that is not padded base64 of \(SecretHash.hashLength) bytes"
            case .openSSL(let what): return "OpenSSL failed to \(what)"
            }
        }
    }

    /// PBKDF2 iterations.
    public let iterations: Int
    private let salt: [UInt8]
    private let hash: [UInt8]

    private init(iterations: Int, salt: [UInt8], hash: [UInt8]) {
        self.iterations = iterations
        self.salt = salt
        self.hash = hash
    }

    /// Hashes `secret` with fresh random salt. The secret must be one `HELLO token=` can carry (else nobody could
    /// ever present it).
    public static func make(secret: String, iterations: Int = defaultIterations) throws(Problem) -> SecretHash {
        do {
            try ClientName.checkToken(secret)
        } catch {
            throw .unusableSecret(error)
        }
        guard iterationRange.contains(iterations) else { throw .iterations("\(iterations)") }
        var salt = [UInt8](repeating: 0, count: saltLength)
        guard RAND_bytes(&salt, Int32(saltLength)) == 1 else { throw .openSSL("make random salt") }
        guard let hash = derive(secret, salt: salt, iterations: iterations) else { throw .openSSL("derive the hash") }
        return SecretHash(iterations: iterations, salt: salt, hash: hash)
    }

    /// Reads a hash written as ``encoded``; the error names what is wrong with it.
    public init(parsing text: String) throws(Problem) {
        let fields = text.split(separator: "$", omittingEmptySubsequences: false)
        guard fields.count == 4 else { throw .fieldCount(fields.count) }
        guard fields[0] == Self.algorithm else { throw .unknownAlgorithm }
        // Digits only: Int("+5") would pass, and the text should have one spelling.
        guard fields[1].utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
            fields[1].first != "0", let iterations = Int(fields[1]), Self.iterationRange.contains(iterations)
        else { throw .iterations(String(fields[1])) }
        guard let salt = Self.bytes(base64: fields[2]), (8...64).contains(salt.count) else { throw .salt }
        guard let hash = Self.bytes(base64: fields[3]), hash.count == Self.hashLength else { throw .hash }
        self.init(iterations: iterations, salt: salt, hash: hash)
    }

    /// The text for the config file's `secret_hash`: `pbkdf2-sha256$<iterations>$<salt base64>$<hash base64>`.
    public var encoded: String {
        "\(Self.algorithm)$\(iterations)$\(Self.base64(salt))$\(Self.base64(hash))"
    }

    /// `bytes` as standard padded base64 (RFC 4648 section 4), with Foundation's encoder.
    static func base64(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }

    /// The bytes of `field` when it is exactly what ``base64(_:)`` writes for them, else nil: Foundation's decoder
    /// also takes nonzero unused bits (`Zh==` for `Zg==`), and a stored hash should have one spelling.
    static func bytes(base64 field: Substring) -> [UInt8]? {
        let text = String(field)
        guard let data = Data(base64Encoded: text), data.base64EncodedString() == text else { return nil }
        return Array(data)
    }

    /// The algorithm and the iteration count only, so that a hash printed in a log or a failed assertion does not
    /// hand out what an attacker would guess against.
    public var description: String { "\(Self.algorithm)$\(iterations)$…" }

    /// Whether `secret` is the one this hash was made from. Takes as long as ``make(secret:iterations:)`` (the
    /// PBKDF2 derivation); the final comparison takes the same time wherever the hashes differ.
    public func verify(_ secret: String) -> Bool {
        guard let derived = Self.derive(secret, salt: salt, iterations: iterations) else { return false }
        return derived.withUnsafeBytes { given in
            hash.withUnsafeBytes { stored in
                CRYPTO_memcmp(given.baseAddress, stored.baseAddress, Self.hashLength) == 0
            }
        }
    }

    /// PBKDF2-HMAC-SHA256 of `secret`'s UTF-8 bytes; nil when OpenSSL fails.
    private static func derive(_ secret: String, salt: [UInt8], iterations: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: hashLength)
        let secretBytes = Array(secret.utf8)
        let status = secretBytes.withUnsafeBufferPointer { secretBuffer in
            secretBuffer.withMemoryRebound(to: CChar.self) { password in
                PKCS5_PBKDF2_HMAC(
                    password.baseAddress, Int32(password.count), salt, Int32(salt.count), Int32(iterations),
                    EVP_sha256(), Int32(hashLength), &out)
            }
        }
        return status == 1 ? out : nil
    }
}
