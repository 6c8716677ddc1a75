import Dispatch
import SubscriptionNATS
import SubscriptionProtocol
import SubscriptionWire

/// What the bridge keeps for retained numbers: one stored property of ``ClusterBridge``.
struct RetainedBridgeState {
    /// The retained bucket, once made or opened.
    var bucket: KeyValueBucket?
    /// Its watcher.
    var watcher: KeyValueWatcher?
    /// True while a make-or-open of the bucket is under way.
    var isOpening = false
    /// The cluster's retained numbers and their latest values.
    var cache = RetainedCache()
    /// This node's writes under way, by their `Subd-Id` counter.
    var ownWrites: Set<UInt64> = []
    /// This node's receivers of its own writes that the watch delivered before their acknowledgement came.
    var deliveredByWatch: [UInt64: Int] = [:]
    /// Publications whose write lost to another node's, waiting (per number, by ticket) for this node to learn the
    /// newer value before they write again.
    var waiting: [String: [UInt64: () -> Void]] = [:]
    /// The last ticket given to a waiting publication.
    var lastTicket: UInt64 = 0
}

/// Retained numbers shared between nodes (docs/CLUSTER.md, "The message path", step 5): the numbers bucket has them
/// with the value `retained`; the bucket `subd_retained` holds each one's latest value (key = number, value =
/// payload, `Subd-Rev`/`Subd-Gen`/`Subd-Id`/`Subd-From`/`Subd-Info` in headers). A `PUB` writes the next revision
/// at the key's last sequence (so of two nodes writing at once one wins and the other writes again on top of it),
/// and every node, the publisher's too, delivers each stored value once, in the bucket's order, with its `rev=`.
extension ClusterBridge {
    /// The name of the retained values bucket.
    public static let retainedBucket = "subd_retained"
    /// The value a retained number has in the numbers bucket.
    static let retainedValue = Array("retained".utf8)
    /// How many of a number's latest values the retained bucket keeps: a node that missed a stored value's republish
    /// (lost with a NATS server that died) finds it at the next gap in the live writes, unless this many newer ones
    /// of the number were stored first. Costs up to this many reads per number in a node's first load.
    static let retainedHistory = 8
    /// How long a publication may wait for its write to win (other nodes writing the same number at once).
    static let retainedWriteDeadline: DispatchTimeInterval = .seconds(2)
    /// How long a publication whose write lost waits for the newer value's republish before this node reads the
    /// bucket for it, and then again while it waits: the republish may have been lost, and when no later write of
    /// any number follows it, only the tail check (``tailCheck``, slower) would show this node the gap.
    static let retainedLostWriteCheck: DispatchTimeInterval = .milliseconds(250)

    // MARK: The bucket

    /// Makes the retained bucket (or finds it), then watches it; tried again until it works.
    func openRetainedBucketIfNeeded() {
        guard retained.bucket == nil, !retained.isOpening, client.isConnected else { return }
        retained.isOpening = true
        let configuration = KeyValueConfiguration(
            bucket: Self.retainedBucket, replicas: settings.bucketReplicas, history: Self.retainedHistory)
        KeyValueBucket.createOrOpen(configuration, client: client, timeout: Self.bucketTimeout) { [self] result in
            switch result {
            case .success(let bucket): retainedBucketOpened(bucket)
            case .failure(let error): retainedBucketFailed(error)
            }
        }
    }

    private func retainedBucketFailed(_ error: JetStreamError) {
        retained.isOpening = false
        logger.debug("cluster: the retained bucket is not available yet: \(error)")
        server.queue.asyncAfter(deadline: .now() + Self.bucketRetry) { [self] in openRetainedBucketIfNeeded() }
    }

    private func retainedBucketOpened(_ opened: KeyValueBucket) {
        retained.isOpening = false
        do {
            retained.watcher = try KeyValueWatcher(bucket: opened, tailCheck: Self.tailCheck) { [self] event in
                retainedWatched(event)
            }
        } catch {
            retainedBucketFailed(error)
            return
        }
        retained.bucket = opened
        logger.info("cluster: retained bucket \(Self.retainedBucket) open")
    }

    /// A value stored in the retained bucket, here or on another node.
    private func retainedWatched(_ event: KeyValueWatchEvent) {
        switch event {
        case .entry(let entry):
            let value =
                entry.operation == .put ? BridgeHeaders.decodeRetained(entry.headers, payload: entry.value) : nil
            let receivers = retainedStored(entry.key, RetainedCache.Stored(sequence: entry.revision, value: value))
            if let asked = confirmationAsked(by: entry, in: retained.watcher) {
                confirmWrite(asked, receivers: receivers ?? 0, heldInterest: holdsInterest(matching: entry.key))
            }
        case .caughtUp:
            catchUp.caughtUp(.retained)
            logger.info("cluster: retained values caught up with the bucket\(Self.repairs(of: retained.watcher))")
        case .loadFailed(let error):
            logger.warning("cluster: loading the retained bucket failed (tried again): \(error)")
        }
    }

    /// The bucket stored `entry` for `key` (its watch, or this node's write acknowledged): a newer value of a retained
    /// number this node holds is delivered here. Returns this node's receivers; nil when nothing was delivered.
    @discardableResult
    private func retainedStored(_ key: String, _ entry: RetainedCache.Stored) -> Int? {
        var receivers: Int?
        if let value = retained.cache.stored(key, entry) {
            receivers = applyRetained(key, value)
            if value.origin == origin, retained.ownWrites.contains(value.counter) {
                retained.deliveredByWatch[value.counter] = receivers ?? 0
            }
        }
        wakeWaiting(key)
        return receivers
    }

    /// Delivers a retained value on this node (when it holds the number and not that revision yet); the center's
    /// slot then holds its bytes, and the cache forgets them.
    @discardableResult
    private func applyRetained(_ number: String, _ value: RetainedCache.Value) -> Int? {
        let receivers = server.applyClusterRetained(
            number, revision: value.revision, sender: value.sender, info: value.info, payload: value.payload)
        if receivers != nil {
            retained.cache.delivered(number)
            scheduleTurnEnd()
        }
        return receivers
    }

    // MARK: The numbers bucket's side

    /// A number the numbers bucket has (its watch, this node's `CREATE`, a lookup): it exists here with the bucket's
    /// kind; a retained one gets the current value this node knows of its generation.
    func numberStored(_ entry: KeyValueEntry) {
        let isRetained = entry.value == Self.retainedValue
        server.applyClusterCreate(entry.key, retained: isRetained)
        guard isRetained else {
            retained.cache.numberRemoved(entry.key)
            return
        }
        if let value = retained.cache.numberCreated(entry.key, generation: entry.revision) {
            applyRetained(entry.key, value)
        }
    }

    /// A number the numbers bucket deleted: no longer a retained number of the cluster (publications waiting to
    /// write it find that out).
    func numberDeleted(_ number: String) {
        retained.cache.numberRemoved(number)
        wakeWaiting(number)
    }

    // MARK: Publishing

    /// True when the cluster has `number` as a retained number.
    public func sharesRetained(_ number: String) -> Bool {
        retained.cache.isShared(number)
    }

    /// Writes the number's next revision to the retained bucket; once stored, it is delivered here (and on every
    /// node through its watch). Completes with this node's receivers and, with `ack: all`, those the other nodes
    /// confirmed (the value carries `Subd-Ack`; ``answerWrite(_:waits:local:answer:)``). `LIMIT` when NATS or the
    /// bucket cannot be reached, or when other nodes' writes of the number kept winning for
    /// ``retainedWriteDeadline``.
    public func publishRetained(
        to number: String, sender: String?, info: [InfoPair], payload: [UInt8],
        completion: @escaping @Sendable (Result<Int, ProtocolError>) -> Void
    ) {
        guard client.isConnected else { return completion(.failure(Self.unavailable("not connected to NATS"))) }
        guard let bucket = retained.bucket else {
            return completion(.failure(Self.unavailable("the retained bucket is not open yet")))
        }
        let publication = RetainedPublication(number: number, sender: sender, info: info, payload: payload)
        write(publication, to: bucket, until: .now() + Self.retainedWriteDeadline, completion: completion)
    }

    /// One attempt to write `publication` at the key's last sequence this node knows.
    private func write(
        _ publication: RetainedPublication, to bucket: KeyValueBucket, until deadline: DispatchTime,
        completion: @escaping @Sendable (Result<Int, ProtocolError>) -> Void
    ) {
        let number = publication.number
        guard let next = retained.cache.nextWrite(number) else {
            let error = ProtocolError(.notFound, "no subscription number '\(number)' (removed meanwhile)")
            return completion(.failure(error))
        }
        counter += 1
        let id = counter
        let (replyTo, waits) = expectWriteConfirmations(of: id, to: number)
        let headers = BridgeHeaders.encodeRetained(
            origin: origin, counter: id, sender: publication.sender, info: publication.info, revision: next.revision,
            generation: next.generation, replyTo: replyTo)
        retained.ownWrites.insert(id)
        bucket.update(number, publication.payload, expectedRevision: next.expectedSequence, headers: headers) {
            [self] result in
            retained.ownWrites.remove(id)
            let watched = retained.deliveredByWatch.removeValue(forKey: id)
            if case .failure = result { forgetWrite(id, waits: waits) }
            switch result {
            case .success(let sequence):
                var receivers = watched
                if receivers == nil {
                    let value = RetainedCache.Value(
                        generation: next.generation, revision: next.revision, sender: publication.sender,
                        info: publication.info, payload: publication.payload, origin: origin, counter: id)
                    receivers = retainedStored(number, RetainedCache.Stored(sequence: sequence, value: value)) ?? 0
                }
                answerWrite(id, waits: waits, local: receivers ?? 0) { completion(.success($0)) }
            case .failure(.wrongLastSequence):
                // Another node wrote first: write again on top of its value once this node has it (from the watch),
                // so that this node delivers every revision in the bucket's order.
                waitForNewer(number, than: next.expectedSequence, until: deadline) { [self] learnt in
                    guard learnt else {
                        return completion(.failure(Self.unavailable("other nodes kept writing '\(number)'")))
                    }
                    write(publication, to: bucket, until: deadline, completion: completion)
                }
            case .failure(let error):
                completion(.failure(Self.writeFailed(error)))
            }
        }
    }

    /// Calls `then(true)` once this node knows an entry of `number` after `sequence` (or the number went), or
    /// `then(false)` at `deadline`.
    private func waitForNewer(
        _ number: String, than sequence: UInt64, until deadline: DispatchTime, then: @escaping @Sendable (Bool) -> Void
    ) {
        if retained.cache.sequence(of: number) > sequence || !retained.cache.isShared(number) { return then(true) }
        guard DispatchTime.now() < deadline else { return then(false) }
        retained.lastTicket += 1
        let ticket = retained.lastTicket
        retained.waiting[number, default: [:]][ticket] = { then(true) }
        checkForNewer(number, ticket: ticket)
        server.queue.asyncAfter(deadline: deadline) { [self] in
            guard retained.waiting[number]?.removeValue(forKey: ticket) != nil else { return }
            if retained.waiting[number]?.isEmpty == true { retained.waiting[number] = nil }
            then(false)
        }
    }

    /// While publication `ticket` still waits for a newer entry of `number` (until it is woken or its deadline
    /// takes it out), reads the bucket every ``retainedLostWriteCheck`` (the watcher's
    /// ``KeyValueWatcher/reloadNow()``, which reads what was stored after the last write it reported): the entry
    /// that made the write lose is stored, and its republish may never come.
    private func checkForNewer(_ number: String, ticket: UInt64) {
        server.queue.asyncAfter(deadline: .now() + Self.retainedLostWriteCheck) { [self] in
            guard retained.waiting[number]?[ticket] != nil, let watcher = retained.watcher else { return }
            logger.debug("cluster: a write of '\(number)' lost to a value not seen here yet; reading the bucket")
            watcher.reloadNow()
            checkForNewer(number, ticket: ticket)
        }
    }

    /// Runs the publications waiting for a newer entry of `number`, in the order they began waiting.
    private func wakeWaiting(_ number: String) {
        guard let waiting = retained.waiting.removeValue(forKey: number) else { return }
        for ticket in waiting.keys.sorted() { waiting[ticket]?() }
    }
}

/// A publication to a shared retained number, kept while its write is tried.
struct RetainedPublication {
    /// The number.
    var number: String
    /// The publisher's name.
    var sender: String?
    /// The info pairs.
    var info: [InfoPair]
    /// The payload.
    var payload: [UInt8]
}
