/// A JetStream key-value bucket: the keys' latest values, each write numbered by the bucket's sequence (its
/// revision), with writes that succeed only at an expected revision. Every call runs on the client's queue and
/// completes there (async forms in `KeyValueBucket+Async.swift`).
///
/// Reads: ``get(_:completion:)`` is a *direct get*, answered by any of the bucket's servers (a replica may lag
/// the leader by a few milliseconds); ``getLatest(_:completion:)`` and a watcher's loads go through the stream's
/// leader (`STREAM.MSG.GET`) and see every acknowledged write.
public struct KeyValueBucket: Sendable {
    /// The bucket's name.
    public let name: String
    /// The subject prefix its writes are republished under (`<prefix>.<bucket>.<key>`); nil when the stream
    /// republishes nothing (not made by this client), and the bucket cannot be watched.
    public let updatesSubjectPrefix: String?
    /// How long each call may wait for its reply.
    public let timeout: Duration
    let api: JetStreamAPI

    /// The client the calls go through.
    public var client: NATSClient { api.client }

    /// The stream's name, `KV_<bucket>`.
    var streamName: String { "KV_\(name)" }

    private init(name: String, updatesSubjectPrefix: String?, api: JetStreamAPI) {
        self.name = name
        self.updatesSubjectPrefix = updatesSubjectPrefix
        self.timeout = api.timeout
        self.api = api
    }

    /// Makes the bucket (or finds it, when it exists with the same configuration) and hands it back.
    ///
    /// - Fails with ``JetStreamError/invalidBucketName(_:)``, ``JetStreamError/streamNameInUse(_:)`` (it exists
    ///   with another configuration), or ``JetStreamError/client(_:)`` (``NATSError/noResponders``: JetStream is
    ///   not enabled, or has no leader yet).
    public static func create(
        _ configuration: KeyValueConfiguration, client: NATSClient, timeout: Duration = .seconds(5),
        completion: @escaping @Sendable (Result<KeyValueBucket, JetStreamError>) -> Void
    ) {
        guard KeyValueConfiguration.isValidBucketName(configuration.bucket) else {
            completion(.failure(.invalidBucketName(configuration.bucket)))
            return
        }
        let api = JetStreamAPI(client: client, timeout: timeout)
        let json = JSONCoding.encode(configuration.streamConfig)
        api.call("STREAM.CREATE.KV_\(configuration.bucket)", json: json, as: JetStreamJSON.StreamInfo.self) { result in
            completion(
                result.map { reply in
                    KeyValueBucket(name: configuration.bucket, updatesSubjectPrefix: republishPrefix(reply), api: api)
                })
        }
    }

    /// Finds an existing bucket (`STREAM.INFO`); ``JetStreamError/streamNotFound`` when there is none.
    public static func open(
        _ name: String, client: NATSClient, timeout: Duration = .seconds(5),
        completion: @escaping @Sendable (Result<KeyValueBucket, JetStreamError>) -> Void
    ) {
        guard KeyValueConfiguration.isValidBucketName(name) else {
            completion(.failure(.invalidBucketName(name)))
            return
        }
        let api = JetStreamAPI(client: client, timeout: timeout)
        api.call("STREAM.INFO.KV_\(name)", json: "", as: JetStreamJSON.StreamInfo.self) { result in
            completion(
                result.map { reply in
                    KeyValueBucket(name: name, updatesSubjectPrefix: republishPrefix(reply), api: api)
                })
        }
    }

    /// Makes the bucket, or opens it when it exists already (made by another client, perhaps with other settings:
    /// it is used as it is); every node of a cluster calls this for the buckets they share.
    public static func createOrOpen(
        _ configuration: KeyValueConfiguration, client: NATSClient, timeout: Duration = .seconds(5),
        completion: @escaping @Sendable (Result<KeyValueBucket, JetStreamError>) -> Void
    ) {
        create(configuration, client: client, timeout: timeout) { result in
            guard case .failure(.streamNameInUse) = result else { return completion(result) }
            open(configuration.bucket, client: client, timeout: timeout, completion: completion)
        }
    }

    /// The republish destination of a stream info reply, `<prefix>.<bucket>.>`, without its `>`.
    private static func republishPrefix(_ reply: JetStreamJSON.StreamInfo) -> String? {
        guard let destination = reply.config?.republish?.dest, destination.hasSuffix(".>") else {
            return nil
        }
        return String(destination.dropLast())
    }

    // MARK: Writes

    /// Sets `key` to `value`, whatever it was; completes with the new revision.
    public func put(
        _ key: String, _ value: [UInt8], headers: NATSHeaders = NATSHeaders(),
        completion: @escaping @Sendable (Result<UInt64, JetStreamError>) -> Void
    ) {
        write(key, value, headers: headers, completion: completion)
    }

    /// Sets `key` only if it does not exist (never written, or deleted); completes with the new revision, or
    /// ``JetStreamError/wrongLastSequence(current:)`` when the key exists, decided by the bucket's leader, so of
    /// several concurrent creates exactly one wins.
    public func create(
        _ key: String, _ value: [UInt8], headers: NATSHeaders = NATSHeaders(),
        completion: @escaping @Sendable (Result<UInt64, JetStreamError>) -> Void
    ) {
        update(key, value, expectedRevision: 0, headers: headers) { result in
            guard case .failure(.wrongLastSequence) = result else { return completion(result) }
            // The key has a last revision: a value, or a delete marker (which a create may replace).
            getLatest(key, includingDeletes: true) { latest in
                switch latest {
                case .success(let entry?) where entry.operation != .put:
                    update(key, value, expectedRevision: entry.revision, headers: headers, completion: completion)
                case .success(let entry?):
                    completion(.failure(.wrongLastSequence(current: entry.revision)))
                case .success(nil):
                    completion(result)
                case .failure(let error):
                    completion(.failure(error))
                }
            }
        }
    }

    /// Sets `key` only if its last revision is `expectedRevision` (0: the key was never written); completes with
    /// the new revision or ``JetStreamError/wrongLastSequence(current:)``. Of several updates at one revision, from
    /// any clients, at most one is stored.
    public func update(
        _ key: String, _ value: [UInt8], expectedRevision: UInt64, headers: NATSHeaders = NATSHeaders(),
        completion: @escaping @Sendable (Result<UInt64, JetStreamError>) -> Void
    ) {
        var headers = headers
        headers.set("Nats-Expected-Last-Subject-Sequence", String(expectedRevision))
        headers.set("Nats-Msg-Id", Self.conditionalWriteID(key, expectedRevision))
        write(key, value, headers: headers, completion: completion)
    }

    /// The message id of a write to `key` at `expectedRevision`. A replicated stream checks the expected revision
    /// before it proposes a write, so two writes in flight at once may both pass that check (nats-server issue 4320,
    /// fixed in 2.9.21); its leader also dedupes message ids before proposing, and no two writes may rightly be made
    /// at one revision of one key, so this id makes the second one a duplicate, answered as
    /// ``JetStreamError/wrongLastSequence(current:)``. (A revision, once passed, never comes back, so the duplicate
    /// window never refuses a write that could succeed.)
    static func conditionalWriteID(_ key: String, _ expectedRevision: UInt64) -> String {
        "\(key)@\(expectedRevision)"
    }

    /// Deletes `key`: writes a delete marker (`KV-Operation: DEL`), which watchers see with `headers` (the
    /// stream stores the marker's headers, as a put's); with `expectedRevision`, only if that is the key's last
    /// revision. Completes with the marker's revision.
    public func delete(
        _ key: String, expectedRevision: UInt64? = nil, headers: NATSHeaders = NATSHeaders(),
        completion: @escaping @Sendable (Result<UInt64, JetStreamError>) -> Void
    ) {
        var headers = headers
        headers.set(KeyValueEntry.operationHeader, KeyValueEntry.Operation.delete.rawValue)
        if let expectedRevision {
            headers.set("Nats-Expected-Last-Subject-Sequence", String(expectedRevision))
            headers.set("Nats-Msg-Id", Self.conditionalWriteID(key, expectedRevision))
        }
        write(key, [], headers: headers, completion: completion)
    }

    private func write(
        _ key: String, _ value: [UInt8], headers: NATSHeaders,
        completion: @escaping @Sendable (Result<UInt64, JetStreamError>) -> Void
    ) {
        guard Self.isValidKey(key) else { return completion(.failure(.invalidKey(key))) }
        client.request(
            subject: "$KV.\(name).\(key)", headers: headers.isEmpty ? nil : headers, payload: value,
            timeout: timeout
        ) { result in
            completion(result.mapError(JetStreamError.client).flatMap(JetStreamAPI.decodeAck))
        }
    }

    // MARK: Reads

    /// The key's value by a direct get (any replica answers); nil when the key was never written or is deleted.
    public func get(_ key: String, completion: @escaping @Sendable (Result<KeyValueEntry?, JetStreamError>) -> Void) {
        guard Self.isValidKey(key) else { return completion(.failure(.invalidKey(key))) }
        let name = self.name
        client.request(subject: "$JS.API.DIRECT.GET.\(streamName).$KV.\(name).\(key)", payload: [], timeout: timeout) {
            result in
            switch result {
            case .failure(let error):
                completion(.failure(.client(error)))
            case .success(let reply) where reply.status == 404:
                completion(.success(nil))
            case .success(let reply) where reply.status != nil:
                let status = reply.status ?? 0
                completion(.failure(.api(status: status, code: 0, description: reply.headers?.statusDescription ?? "")))
            case .success(let reply):
                completion(
                    KeyValueEntry.make(bucket: name, fromHeadersOf: reply).map { $0.operation == .put ? $0 : nil })
            }
        }
    }

    /// The key's latest entry through the stream's leader (`STREAM.MSG.GET` of the last message on its subject);
    /// nil when there is none; a delete or purge marker only with `includingDeletes`.
    public func getLatest(
        _ key: String, includingDeletes: Bool = false,
        completion: @escaping @Sendable (Result<KeyValueEntry?, JetStreamError>) -> Void
    ) {
        guard Self.isValidKey(key) else { return completion(.failure(.invalidKey(key))) }
        messageGet(JetStreamJSON.MessageGetRequest(lastBySubject: "$KV.\(name).\(key)")) { result in
            completion(
                result.map { entry in
                    guard let entry, includingDeletes || entry.operation == .put else { return nil }
                    return entry
                })
        }
    }

    /// The revision of the last write the bucket stored, of any key (0: none yet), from the stream's leader
    /// (`STREAM.INFO`).
    public func lastRevision(completion: @escaping @Sendable (Result<UInt64, JetStreamError>) -> Void) {
        api.call("STREAM.INFO.\(streamName)", json: "", as: JetStreamJSON.StreamInfo.self) { result in
            completion(result.map { $0.state?.lastSequence ?? 0 })
        }
    }

    /// The first stored write at or after revision `revision` (nil past the end), through the leader: one step of
    /// a watcher's load.
    func next(from revision: UInt64, completion: @escaping @Sendable (Result<KeyValueEntry?, JetStreamError>) -> Void) {
        messageGet(
            JetStreamJSON.MessageGetRequest(seq: revision, nextBySubject: "$KV.\(name).>"), completion: completion)
    }

    private func messageGet(
        _ request: JetStreamJSON.MessageGetRequest,
        completion: @escaping @Sendable (Result<KeyValueEntry?, JetStreamError>) -> Void
    ) {
        let name = self.name
        let json = JSONCoding.encode(request)
        api.call("STREAM.MSG.GET.\(streamName)", json: json, as: JetStreamJSON.MessageGetReply.self) { result in
            switch result {
            case .failure(.api(_, JetStreamError.Code.noMessageFound, _)):
                completion(.success(nil))
            case .failure(let error):
                completion(.failure(error))
            case .success(let reply):
                completion(KeyValueEntry.make(bucket: name, fromMessageGet: reply.message).map { $0 })
            }
        }
    }

    /// A key is a literal subject tail: tokens split by `.`, none empty, no space, control byte or wildcard.
    public static func isValidKey(_ key: String) -> Bool {
        (try? NATSSubject.check(key, allowWildcards: false)) != nil
    }
}
