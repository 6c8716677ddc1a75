/// Calls to JetStream's request/reply API (`$JS.API.…`) over a ``NATSClient``: a JSON request, a JSON reply whose
/// `"error"` member becomes a ``JetStreamError``. On the client's queue, like the client.
struct JetStreamAPI: Sendable {
    /// The client the calls go through.
    let client: NATSClient
    /// How long a call may wait for its reply.
    let timeout: Duration

    /// The API's subject prefix.
    static let prefix = "$JS.API."

    /// Sends `json` to `$JS.API.<operation>` and hands back the reply's JSON (not an error reply).
    func call(
        _ operation: String, json: String, completion: @escaping @Sendable (Result<JSONValue, JetStreamError>) -> Void
    ) {
        client.request(subject: Self.prefix + operation, payload: Array(json.utf8), timeout: timeout) { result in
            completion(result.mapError(JetStreamError.client).flatMap(Self.decode))
        }
    }

    /// The reply's JSON object, or its error.
    static func decode(_ reply: NATSMessage) -> Result<JSONValue, JetStreamError> {
        let value: JSONValue
        do {
            value = try JSONReader.parse(reply.payload)
        } catch {
            return .failure(.badResponse(error.description))
        }
        if let error = value["error"] { return .failure(JetStreamError(apiError: error)) }
        return .success(value)
    }

    /// The publish acknowledgement of a write to a stream (`{"stream":"KV_b","seq":7}` or an error), as the
    /// stream sequence. A duplicate (`"duplicate":true`: a write with its `Nats-Msg-Id` was made already, which for
    /// a conditional write of ``KeyValueBucket`` means another write at its expected revision) is not stored:
    /// ``JetStreamError/wrongLastSequence(current:)``.
    static func decodeAck(_ reply: NATSMessage) -> Result<UInt64, JetStreamError> {
        decode(reply).flatMap { value in
            if value["duplicate"]?.bool == true {
                let sequence = value["seq"]?.uint64 ?? 0
                return .failure(.wrongLastSequence(current: sequence > 0 ? sequence : nil))
            }
            guard let sequence = value["seq"]?.uint64, sequence > 0 else {
                return .failure(.badResponse("a publish acknowledgement without a sequence"))
            }
            return .success(sequence)
        }
    }
}
