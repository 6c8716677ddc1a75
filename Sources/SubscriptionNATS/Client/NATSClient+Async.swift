/// The client's calls from any task or thread: each hops onto ``NATSClient/queue`` and back.
extension NATSClient {
    /// Runs `body` on the client's queue and returns what it returns.
    public func onQueue<T: Sendable>(_ body: @escaping @Sendable () throws(NATSError) -> T) async throws(NATSError) -> T
    {
        let result: Result<T, NATSError> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(NATSError) {
                    continuation.resume(returning: .success(try body()))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// ``flush(timeout:completion:)`` from any task.
    public func flush(timeout: Duration = .seconds(5)) async throws(NATSError) {
        let result: Result<Void, NATSError> = await withCheckedContinuation { continuation in
            queue.async { [self] in
                flush(timeout: timeout) { continuation.resume(returning: $0) }
            }
        }
        try result.get()
    }

    /// ``request(subject:headers:payload:timeout:completion:)`` from any task.
    public func request(
        subject: String, headers: NATSHeaders? = nil, payload: [UInt8], timeout: Duration = .seconds(5)
    ) async throws(NATSError) -> NATSMessage {
        let result: Result<NATSMessage, NATSError> = await withCheckedContinuation { continuation in
            queue.async { [self] in
                request(subject: subject, headers: headers, payload: payload, timeout: timeout) {
                    continuation.resume(returning: $0)
                }
            }
        }
        return try result.get()
    }
}
