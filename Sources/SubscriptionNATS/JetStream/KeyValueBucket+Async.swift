/// The bucket's calls from any task: each hops onto the client's queue and back.
extension KeyValueBucket {
    /// ``create(_:client:timeout:completion:)`` from any task.
    public static func create(
        _ configuration: KeyValueConfiguration, client: NATSClient, timeout: Duration = .seconds(5)
    )
        async throws(JetStreamError) -> KeyValueBucket
    {
        try await onQueue(client) { done in create(configuration, client: client, timeout: timeout, completion: done) }
    }

    /// ``open(_:client:timeout:completion:)`` from any task.
    public static func open(_ name: String, client: NATSClient, timeout: Duration = .seconds(5))
        async throws(JetStreamError) -> KeyValueBucket
    {
        try await onQueue(client) { done in open(name, client: client, timeout: timeout, completion: done) }
    }

    /// ``put(_:_:headers:completion:)`` from any task: the new revision.
    public func put(_ key: String, _ value: [UInt8], headers: NATSHeaders = NATSHeaders()) async throws(JetStreamError)
        -> UInt64
    {
        try await Self.onQueue(client) { done in put(key, value, headers: headers, completion: done) }
    }

    /// ``create(_:_:headers:completion:)`` from any task: the new revision.
    public func create(_ key: String, _ value: [UInt8], headers: NATSHeaders = NATSHeaders())
        async throws(JetStreamError) -> UInt64
    {
        try await Self.onQueue(client) { done in create(key, value, headers: headers, completion: done) }
    }

    /// ``update(_:_:expectedRevision:headers:completion:)`` from any task: the new revision.
    public func update(_ key: String, _ value: [UInt8], expectedRevision: UInt64, headers: NATSHeaders = NATSHeaders())
        async throws(JetStreamError) -> UInt64
    {
        try await Self.onQueue(client) { done in
            update(key, value, expectedRevision: expectedRevision, headers: headers, completion: done)
        }
    }

    /// ``delete(_:expectedRevision:headers:completion:)`` from any task: the delete marker's revision.
    public func delete(
        _ key: String, expectedRevision: UInt64? = nil, headers: NATSHeaders = NATSHeaders()
    ) async throws(JetStreamError) -> UInt64 {
        try await Self.onQueue(client) { done in
            delete(key, expectedRevision: expectedRevision, headers: headers, completion: done)
        }
    }

    /// ``get(_:completion:)`` from any task.
    public func get(_ key: String) async throws(JetStreamError) -> KeyValueEntry? {
        try await Self.onQueue(client) { done in get(key, completion: done) }
    }

    /// ``getLatest(_:includingDeletes:completion:)`` from any task.
    public func getLatest(_ key: String, includingDeletes: Bool = false) async throws(JetStreamError) -> KeyValueEntry?
    {
        try await Self.onQueue(client) { done in getLatest(key, includingDeletes: includingDeletes, completion: done) }
    }

    /// Starts `start` on the client's queue and waits for the completion it is given.
    private static func onQueue<T: Sendable>(
        _ client: NATSClient,
        _ start: @escaping @Sendable (@escaping @Sendable (Result<T, JetStreamError>) -> Void) -> Void
    ) async throws(JetStreamError) -> T {
        let result: Result<T, JetStreamError> = await withCheckedContinuation { continuation in
            client.queue.async { start { continuation.resume(returning: $0) } }
        }
        return try result.get()
    }
}
