import Dispatch

extension NATSClient {
    /// Publishes a request and calls `completion` with the first reply (on ``queue``): fails with
    /// ``NATSError/noResponders`` when nobody subscribes to `subject` (the server's status 503), with
    /// ``NATSError/timeout`` after `timeout`, and with the publish's error when it cannot be sent.
    ///
    /// Replies come to one wildcard subscription, `_INBOX.<random>.*`, made on the first request.
    public func request(
        subject: String, headers: NATSHeaders? = nil, payload: some Collection<UInt8>, timeout: Duration = .seconds(5),
        completion: @escaping @Sendable (Result<NATSMessage, NATSError>) -> Void
    ) {
        assertOnQueue()
        if inbox == nil {
            let prefix = InboxName.make() + "."
            do throws(NATSError) {
                let sid = try subscribe(subject: prefix + "*") { [self] reply in
                    guard let completion = inbox?.take(replyOn: reply.subject) else { return }
                    completion(reply.status == 503 ? .failure(.noResponders) : .success(reply))
                }
                inbox = RequestInbox(prefix: prefix, sid: sid)
            } catch {
                completion(.failure(error))
                return
            }
        }
        guard let (token, replyTo) = inbox?.add(completion) else { return }
        do throws(NATSError) {
            try publish(subject: subject, replyTo: replyTo, headers: headers, payload: payload)
        } catch {
            let completion = inbox?.take(token)
            completion?(.failure(error))
            return
        }
        queue.asyncAfter(deadline: .now() + Self.interval(timeout)) { [self] in
            let completion = inbox?.take(token)
            completion?(.failure(.timeout))
        }
    }
}
