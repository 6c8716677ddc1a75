#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The one place SubscriptionNATS reads and writes JSON: Foundation's `JSONDecoder` and `JSONEncoder` over the
/// `Codable` shapes of `INFO`, `CONNECT` and JetStream's API (`JetStreamJSON.swift`). FoundationEssentials where the
/// toolchain has it (no ICU), Foundation elsewhere.
///
/// None of it is on a message's path: `INFO` comes once per connection (and when the cluster changes), JetStream
/// calls are the buckets' control plane (a write's acknowledgement, a load's reads). Numbers are read as the fixed
/// width integers the shapes declare, so a 64-bit sequence number comes back exactly.
enum JSONCoding {
    /// Shared: a decoder's and an encoder's settings are fixed here, and both are safe to use from any thread.
    private static let decoder = JSONDecoder()
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// Decodes `bytes` as a `T`; the error says what was wrong in a line (``reason(_:)``).
    static func decode<T: Decodable, Bytes: Collection<UInt8>>(_ type: T.Type, from bytes: Bytes) throws(Failure) -> T {
        do {
            return try decoder.decode(type, from: Data(bytes))
        } catch {
            throw Failure(reason: reason(error))
        }
    }

    /// The JSON text of `value`: one line, keys sorted (so equal values are equal texts), `/` not escaped.
    ///
    /// The shapes encoded here hold strings, integers, booleans and nested shapes only, for which `JSONEncoder`
    /// does not fail (it fails only on non-finite floating-point numbers).
    static func encode<T: Encodable>(_ value: T) -> String {
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            preconditionFailure("JSONEncoder failed on \(T.self), which holds no floating-point number: \(error)")
        }
    }

    /// Why a text could not be decoded, in one line.
    struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// What `JSONDecoder` said, with the path of the member it was at.
        var reason: String

        var description: String { reason }
    }

    /// `error` in one line: for a `DecodingError`, the member's path (`message.seq`) and the decoder's words.
    static func reason(_ error: any Error) -> String {
        guard let decoding = error as? DecodingError else { return "\(error)" }
        let context: DecodingError.Context
        switch decoding {
        case .typeMismatch(_, let found), .valueNotFound(_, let found), .dataCorrupted(let found):
            context = found
        case .keyNotFound(let key, let found):
            return path(found.codingPath + [key]) + ": missing"
        @unknown default:
            return "\(error)"
        }
        let words = context.debugDescription
        return context.codingPath.isEmpty ? words : path(context.codingPath) + ": " + words
    }

    private static func path(_ keys: [any CodingKey]) -> String {
        keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }
}
