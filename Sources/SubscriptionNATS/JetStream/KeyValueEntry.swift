#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One key's value at one revision, as a get, a load or a watch sees it.
public struct KeyValueEntry: Equatable, Sendable {
    /// What the write was.
    public enum Operation: String, Equatable, Sendable {
        /// A value was put (a put, create or update).
        case put = "PUT"
        /// The key was deleted (a marker that stays as the key's last revision).
        case delete = "DEL"
        /// The key was purged (a marker; earlier revisions removed).
        case purge = "PURGE"
    }

    /// The bucket.
    public var bucket: String
    /// The key.
    public var key: String
    /// The value (empty for a delete or purge).
    public var value: [UInt8]
    /// The bucket's stream sequence of this write: rises with every write to the bucket.
    public var revision: UInt64
    /// What the write was.
    public var operation: Operation
    /// The headers the writer gave (JetStream's own, `Nats-…` and `KV-Operation`, left out).
    public var headers: NATSHeaders

    /// An entry.
    public init(
        bucket: String, key: String, value: [UInt8], revision: UInt64, operation: Operation = .put,
        headers: NATSHeaders = NATSHeaders()
    ) {
        self.bucket = bucket
        self.key = key
        self.value = value
        self.revision = revision
        self.operation = operation
        self.headers = headers
    }

    /// The header that marks a delete or purge.
    static let operationHeader = "KV-Operation"

    /// An entry from a stored message's subject (`$KV.<bucket>.<key>`), sequence, headers and payload.
    static func make(bucket: String, subject: String, revision: UInt64, headers: NATSHeaders?, payload: [UInt8])
        -> Result<KeyValueEntry, JetStreamError>
    {
        let prefix = "$KV.\(bucket)."
        guard subject.hasPrefix(prefix), subject.utf8.count > prefix.utf8.count else {
            return .failure(.badResponse("a message on '\(subject)' is not of bucket '\(bucket)'"))
        }
        let headers = headers ?? NATSHeaders()
        var operation = Operation.put
        if let text = headers[operationHeader] {
            guard let known = Operation(rawValue: text) else {
                return .failure(.badResponse("unknown \(operationHeader) '\(text)'"))
            }
            operation = known
        }
        var own = headers
        own.status = nil
        own.statusDescription = ""
        own.fields.removeAll { field in
            NATSHeaders.sameName(field.name, operationHeader) || field.name.utf8.starts(with: "Nats-".utf8)
                || field.name.utf8.starts(with: "nats-".utf8)
        }
        return .success(
            KeyValueEntry(
                bucket: bucket, key: String(subject.dropFirst(prefix.count)), value: payload, revision: revision,
                operation: operation, headers: own))
    }

    /// An entry from a direct get's reply or a republished write: the subject and the sequence are in its
    /// `Nats-Subject` and `Nats-Sequence` headers.
    static func make(bucket: String, fromHeadersOf message: NATSMessage) -> Result<KeyValueEntry, JetStreamError> {
        guard let headers = message.headers, let subject = headers["Nats-Subject"],
            let sequence = headers["Nats-Sequence"].flatMap({ UInt64($0) })
        else { return .failure(.badResponse("a stored message without Nats-Subject and Nats-Sequence")) }
        return make(bucket: bucket, subject: subject, revision: sequence, headers: headers, payload: message.payload)
    }

    /// An entry from `STREAM.MSG.GET`'s reply (`{"message":{"subject","seq","hdrs","data"}}`; the header block
    /// and the payload came in base64, which the decoder read).
    static func make(bucket: String, fromMessageGet message: JetStreamJSON.MessageGetReply.StoredMessage)
        -> Result<KeyValueEntry, JetStreamError>
    {
        var headers: NATSHeaders?
        if let block = message.hdrs {
            let parsed: Result<NATSHeaders, NATSProtocolError> = block.withUnsafeBytes { bytes in
                do throws(NATSProtocolError) {
                    return .success(try NATSHeaderBlock.parse(bytes))
                } catch {
                    return .failure(error)
                }
            }
            switch parsed {
            case .success(let block): headers = block
            case .failure(let error): return .failure(.badResponse(error.description))
            }
        }
        return make(
            bucket: bucket, subject: message.subject, revision: message.seq, headers: headers,
            payload: message.data.map(Array.init) ?? [])
    }
}
