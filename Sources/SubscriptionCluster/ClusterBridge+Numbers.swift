import Dispatch
import SubscriptionNATS
import SubscriptionProtocol

/// The shared numbers (docs/CLUSTER.md, "CREATE/REMOVE"): the bucket `subd_numbers` holds every number of the
/// cluster (key = number, value = `plain` or `retained`); `CREATE` is a bucket create, `REMOVE` a delete at the
/// revision read before, and every node's watch applies each stored change to its own center (a retained number's
/// values: `ClusterBridge+Retained.swift`).
///
/// While NATS or the bucket cannot be reached, `CREATE` and `REMOVE` answer `-ERR LIMIT` and change nothing; `PUB`,
/// `SUB` and delivery go on with the numbers this node knows.
extension ClusterBridge {
    /// Makes the bucket (or finds it), then watches it; tried again until it works (JetStream elects its leader in
    /// seconds after the NATS servers start).
    func openBucketIfNeeded() {
        guard bucket == nil, !isOpeningBucket, client.isConnected else { return }
        isOpeningBucket = true
        let configuration = KeyValueConfiguration(bucket: Self.numbersBucket, replicas: settings.bucketReplicas)
        KeyValueBucket.createOrOpen(configuration, client: client, timeout: Self.bucketTimeout) { [self] result in
            switch result {
            case .success(let bucket): bucketOpened(bucket)
            case .failure(let error): bucketFailed(error)
            }
        }
    }

    private func bucketFailed(_ error: JetStreamError) {
        isOpeningBucket = false
        logger.debug("cluster: the numbers bucket is not available yet: \(error)")
        server.queue.asyncAfter(deadline: .now() + Self.bucketRetry) { [self] in openBucketIfNeeded() }
    }

    private func bucketOpened(_ opened: KeyValueBucket) {
        isOpeningBucket = false
        do {
            watcher = try KeyValueWatcher(bucket: opened, tailCheck: Self.tailCheck) { [self] event in watched(event) }
        } catch {
            bucketFailed(error)
            return
        }
        bucket = opened
        logger.info("cluster: numbers bucket \(Self.numbersBucket) open")
        // The numbers `numbers:` makes at start exist in the whole cluster.
        for number in server.configuredNumbers {
            opened.create(number, Self.plainValue) { [self] result in
                switch result {
                case .success, .failure(.wrongLastSequence): break
                case .failure(let error):
                    logger.warning("cluster: cannot share the configured number \(number): \(error)")
                }
            }
        }
    }

    /// A change stored in the bucket, here or on another node.
    private func watched(_ event: KeyValueWatchEvent) {
        switch event {
        case .entry(let entry):
            if entry.operation == .put {
                numberStored(entry)
            } else {
                // Asked before the removal, which ends this node's interest in the number.
                let asked = confirmationAsked(by: entry, in: watcher)
                let held = asked != nil && holdsInterest(matching: entry.key)
                let told = server.applyClusterRemove(entry.key)
                numberDeleted(entry.key)
                if let before = removing[entry.key] { removing[entry.key] = before + told }
                if let asked { confirmWrite(asked, receivers: told, heldInterest: held) }
            }
            scheduleTurnEnd()
        case .caughtUp:
            catchUp.caughtUp(.numbers)
            logger.info("cluster: numbers caught up with the bucket\(Self.repairs(of: watcher))")
        case .loadFailed(let error):
            logger.warning("cluster: loading the numbers bucket failed (tried again): \(error)")
        }
    }

    /// The value a number has in the bucket.
    static let plainValue = Array("plain".utf8)

    /// The bucket, when it is open and NATS is connected; else nil, `completion` given the error to answer.
    private func reachableBucket<T>(or completion: (Result<T, ProtocolError>) -> Void) -> KeyValueBucket? {
        guard client.isConnected else {
            completion(.failure(Self.unavailable("not connected to NATS")))
            return nil
        }
        guard let bucket else {
            completion(.failure(Self.unavailable("the numbers bucket is not open yet")))
            return nil
        }
        return bucket
    }

    /// `-ERR LIMIT the cluster state is unavailable (<why>)`.
    static func unavailable(_ why: String) -> ProtocolError {
        ProtocolError(.limit, "the cluster state is unavailable (\(why)); nothing was changed, try again")
    }

    /// What a bucket *write* that failed answers: ``unavailable(_:)``, except a write whose answer did not come in
    /// time, which may have been stored all the same (the stream's leader proposed it and was killed, its successor
    /// committed it; or the request went out after a reconnect): `-ERR LIMIT the cluster did not answer in time`,
    /// never "nothing was changed" (docs/CLUSTER.md, "Failure cases").
    static func writeFailed(_ error: JetStreamError) -> ProtocolError {
        guard case .client(.timeout) = error else { return unavailable("\(error)") }
        return ProtocolError(
            .limit,
            "the cluster did not answer in time (\(error)); the change may have been made, check before trying again")
    }

    /// A bucket create (expected revision 0, decided by the bucket's leader); the number then exists here too, with
    /// the kind the bucket has (an existing number keeps its own: it is read back through the leader).
    public func create(
        _ number: String, retained: Bool, completion: @escaping @Sendable (Result<Bool, ProtocolError>) -> Void
    ) {
        guard let bucket = reachableBucket(or: completion) else { return }
        let value = retained ? Self.retainedValue : Self.plainValue
        bucket.create(number, value) { [self] result in
            switch result {
            case .success(let revision):
                numberStored(KeyValueEntry(bucket: bucket.name, key: number, value: value, revision: revision))
                completion(.success(true))
            case .failure(.wrongLastSequence):
                bucket.getLatest(number) { [self] latest in
                    switch latest {
                    case .success(let entry?):
                        numberStored(entry)
                        completion(.success(false))
                    case .success(nil):
                        completion(.failure(Self.unavailable("'\(number)' changed in the cluster meanwhile")))
                    case .failure(let error): completion(.failure(Self.unavailable("\(error)")))
                    }
                }
            case .failure(let error): completion(.failure(Self.writeFailed(error)))
            }
        }
    }

    /// The bucket's latest entry for `number`, through its leader; a number it has is created here.
    public func lookUp(_ number: String, completion: @escaping @Sendable (Result<Bool, ProtocolError>) -> Void) {
        guard let bucket = reachableBucket(or: completion) else { return }
        bucket.getLatest(number) { [self] latest in
            switch latest {
            case .success(let entry?):
                logger.debug("cluster: number '\(number)' read from the numbers bucket before its watch brought it")
                numberStored(entry)
                completion(.success(true))
            case .success(nil): completion(.success(false))
            case .failure(let error): completion(.failure(Self.unavailable("\(error)")))
            }
        }
    }

    /// A delete at the revision read just before; the number then goes here too, its exact subscribers told `GONE`.
    /// Completes with those told here and, with `ack: all`, those the other nodes confirmed (the delete carries
    /// `Subd-Ack`; ``answerWrite(_:waits:local:answer:)``).
    public func remove(_ number: String, completion: @escaping @Sendable (Result<Int, ProtocolError>) -> Void) {
        guard let bucket = reachableBucket(or: completion) else { return }
        removing[number] = removing[number] ?? 0
        bucket.getLatest(number) { [self] latest in
            switch latest {
            case .failure(let error):
                removeFailed(number, Self.unavailable("\(error)"), completion)
            case .success(nil):
                let error = ProtocolError(.notFound, "no subscription number '\(number)' (CREATE it first)")
                removeFailed(number, error, completion)
            case .success(let entry?):
                counter += 1
                let ticket = counter
                let (replyTo, waits) = expectWriteConfirmations(of: ticket, to: number)
                let headers = BridgeHeaders.encodeRemoval(origin: origin, counter: ticket, replyTo: replyTo)
                // At the revision read: a number created again meanwhile is not removed.
                bucket.delete(number, expectedRevision: entry.revision, headers: headers) { [self] deleted in
                    switch deleted {
                    case .success:
                        answerWrite(ticket, waits: waits, local: removedHere(number)) { completion(.success($0)) }
                    case .failure(let error):
                        forgetWrite(ticket, waits: waits)
                        let refusal =
                            if case .wrongLastSequence = error {
                                Self.unavailable("'\(number)' changed in the cluster meanwhile")
                            } else {
                                Self.writeFailed(error)
                            }
                        removeFailed(number, refusal, completion)
                    }
                }
            }
        }
    }

    /// The bucket deleted `number`: it goes here too. Returns this node's subscribers told `GONE`, counted once
    /// whoever removed it here first (this answer or the watch).
    private func removedHere(_ number: String) -> Int {
        let toldByWatch = removing.removeValue(forKey: number) ?? 0
        defer { numberDeleted(number) }
        return toldByWatch + server.applyClusterRemove(number)
    }

    /// A `REMOVE` that changed nothing: answered with `error`.
    private func removeFailed(
        _ number: String, _ error: ProtocolError, _ completion: @Sendable (Result<Int, ProtocolError>) -> Void
    ) {
        removing[number] = nil
        completion(.failure(error))
    }
}
