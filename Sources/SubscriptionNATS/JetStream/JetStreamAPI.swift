/// Calls to JetStream's request/reply API (`$JS.API.…`) over a ``NATSClient``: a JSON request, a JSON reply whose
/// `"error"` member becomes a ``JetStreamError`` (shapes in ``JetStreamJSON``). On the client's queue, like the client.
struct JetStreamAPI: Sendable {
    /// The client the calls go through.
    let client: NATSClient
    /// How long a call may wait for its reply.
    let timeout: Duration

    /// The API's subject prefix.
    static let prefix = "$JS.API."

    /// Sends `json` (empty: no request body) to `$JS.API.<operation>` and hands back the reply read as `Body`
    /// (not an error reply).
    func call<Body: Decodable & Sendable>(
        _ operation: String, json: String, as body: Body.Type,
        completion: @escaping @Sendable (Result<Body, JetStreamError>) -> Void
    ) {
        client.request(subject: Self.prefix + operation, payload: Array(json.utf8), timeout: timeout) { result in
            completion(result.mapError(JetStreamError.client).flatMap { Self.decode($0, as: body) })
        }
    }

    /// The reply read as `Body`, or its error.
    static func decode<Body: Decodable>(_ reply: NATSMessage, as body: Body.Type) -> Result<Body, JetStreamError> {
        let decoded: JetStreamJSON.Reply<Body>
        do throws(JSONCoding.Failure) {
            decoded = try JSONCoding.decode(JetStreamJSON.Reply<Body>.self, from: reply.payload)
        } catch {
            return .failure(.badResponse(error.description))
        }
        if let error = decoded.error { return .failure(JetStreamError(apiError: error)) }
        guard let value = decoded.body else { return .failure(.badResponse("a reply without error or body")) }
        return .success(value)
    }

    /// The publish acknowledgement of a write to a stream (`{"stream":"KV_b","seq":7}` or an error), as the
    /// stream sequence. A duplicate (`"duplicate":true`: a write with its `Nats-Msg-Id` was made already, which for
    /// a conditional write of ``KeyValueBucket`` means another write at its expected revision) is not stored:
    /// ``JetStreamError/wrongLastSequence(current:)``.
    static func decodeAck(_ reply: NATSMessage) -> Result<UInt64, JetStreamError> {
        decode(reply, as: JetStreamJSON.PublishAck.self).flatMap { ack in
            if ack.duplicate == true {
                let sequence = ack.seq ?? 0
                return .failure(.wrongLastSequence(current: sequence > 0 ? sequence : nil))
            }
            guard let sequence = ack.seq, sequence > 0 else {
                return .failure(.badResponse("a publish acknowledgement without a sequence"))
            }
            return .success(sequence)
        }
    }
}
