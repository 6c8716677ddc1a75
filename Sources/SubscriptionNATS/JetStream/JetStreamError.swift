/// What went wrong with a JetStream call.
public enum JetStreamError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The write's expected revision was not the key's last one (JetStream error 10071): for a create, the key
    /// exists; for an update, someone wrote it since. `current` is the key's last revision when the server said it.
    case wrongLastSequence(current: UInt64?)
    /// No such stream (10059): the bucket does not exist.
    case streamNotFound
    /// A stream with this name exists with another configuration (10058).
    case streamNameInUse(String)
    /// Another error the JetStream API answered: the HTTP-like status, JetStream's error code, and its text.
    case api(status: Int, code: Int, description: String)
    /// The request could not be made or answered: not connected, timed out, no responders (JetStream is not
    /// enabled or not ready), closed.
    case client(NATSError)
    /// A reply the client cannot read.
    case badResponse(String)
    /// A key that is not a literal NATS subject tail (empty token, space, wildcard).
    case invalidKey(String)
    /// A bucket name other than letters, digits, `_` and `-`.
    case invalidBucketName(String)
    /// The bucket has no republish of its writes (it was not made by ``KeyValueBucket/create(_:client:completion:)``),
    /// so it cannot be watched.
    case notWatchable(bucket: String)

    /// JetStream's error codes the client tells apart.
    enum Code {
        static let wrongLastSequence = 10071
        static let streamNotFound = 10059
        static let streamNameInUse = 10058
        static let noMessageFound = 10037
    }

    /// The error for a reply's `"error"` object.
    init(apiError: JetStreamJSON.APIError) {
        let (status, code, description) = (apiError.code, apiError.errorCode, apiError.description)
        switch code {
        case Code.wrongLastSequence:
            // "wrong last sequence: 7"
            let number = description.split(separator: ":").last.flatMap { UInt64($0.trimmingPrefix(" ")) }
            self = .wrongLastSequence(current: number)
        case Code.streamNotFound: self = .streamNotFound
        case Code.streamNameInUse: self = .streamNameInUse(description)
        default: self = .api(status: status, code: code, description: description)
        }
    }

    public var description: String {
        switch self {
        case .wrongLastSequence(let current):
            return "wrong last sequence" + (current.map { " (the key is at revision \($0))" } ?? "")
        case .streamNotFound: return "no such bucket (stream not found)"
        case .streamNameInUse(let text): return "the bucket exists with another configuration: \(text)"
        case .api(let status, let code, let description): return "JetStream error \(code) (\(status)): \(description)"
        case .client(let error): return error.description
        case .badResponse(let text): return "unreadable JetStream reply: \(text)"
        case .invalidKey(let key): return "invalid key '\(key)'"
        case .invalidBucketName(let name): return "invalid bucket name '\(name)'"
        case .notWatchable(let bucket): return "bucket '\(bucket)' republishes nothing, so it cannot be watched"
        }
    }
}
