import Dispatch
import SubscriptionNATS

/// The bucket `subd_interest` (docs/CLUSTER.md, step 4): each node puts its distinct upstream patterns (plain, and per
/// queue group) under its origin id when they change and every ``ClusterAcks/heartbeat``, and watches the others'
/// entries, so a publishing node knows which nodes and groups a publication reaches (``InterestDirectory``). Every
/// node puts its entry, whatever its own `ack` (a node with `ack: all` must expect the others' confirmations however
/// they answer their own publishers); only a node with `ack: all` watches.
///
/// The bucket keeps an entry at most 30 s (`max_age`), so a node that stopped without deleting its entry is forgotten
/// by a node that starts later too.
extension ClusterBridge {
    /// Makes or opens the interest bucket and watches it (at each connection until it works), then puts this node's
    /// entry and starts the heartbeat. At a reconnection with the bucket open: the entry again at once (the patterns
    /// may have changed while a put could not reach the bucket).
    func openInterestIfNeeded() {
        guard acks.bucket == nil else { return putInterest() }
        guard !acks.isOpening, client.isConnected else { return }
        acks.isOpening = true
        let configuration = KeyValueConfiguration(
            bucket: ClusterAcks.bucketName, replicas: settings.bucketReplicas, storage: .memory,
            maxAge: .nanoseconds(Int64(InterestDirectory.silence)))
        KeyValueBucket.createOrOpen(configuration, client: client, timeout: Self.bucketTimeout) { [self] result in
            switch result {
            case .success(let bucket): interestBucketOpened(bucket)
            case .failure(let error): interestBucketFailed(error)
            }
        }
    }

    private func interestBucketFailed(_ error: JetStreamError) {
        acks.isOpening = false
        logger.debug("cluster: the interest bucket is not available yet: \(error)")
        server.queue.asyncAfter(deadline: .now() + Self.bucketRetry) { [self] in openInterestIfNeeded() }
    }

    private func interestBucketOpened(_ opened: KeyValueBucket) {
        acks.isOpening = false
        if settings.ack == .all {
            do {
                acks.watcher = try KeyValueWatcher(bucket: opened) { [self] event in interestWatched(event) }
            } catch {
                interestBucketFailed(error)
                return
            }
        }
        acks.bucket = opened
        logger.info("cluster: interest bucket \(ClusterAcks.bucketName) open")
        putInterest()
        let timer = DispatchSource.makeTimerSource(queue: server.queue)
        timer.schedule(deadline: .now() + ClusterAcks.heartbeat, repeating: ClusterAcks.heartbeat)
        timer.setEventHandler { [self] in heartbeat() }
        timer.resume()
        acks.timer = timer
    }

    /// Every ``ClusterAcks/heartbeat``: this node's entry again, and the silent nodes forgotten.
    private func heartbeat() {
        putInterest()
        for gone in acks.directory.expire(now: ClusterAcks.now()) {
            logger.info("cluster: node \(gone) was silent for 30 s; its confirmations are no longer awaited")
        }
    }

    /// This node's distinct upstream patterns (plain or in a group) changed: its entry is put again.
    func interestChanged() {
        guard acks.bucket != nil else { return }
        putInterest()
    }

    /// Puts this node's entry, one put at a time (a change during a put is put after it).
    private func putInterest() {
        guard let bucket = acks.bucket else { return }
        guard !acks.isPutting else {
            acks.needsPut = true
            return
        }
        acks.isPutting = true
        acks.needsPut = false
        let groupLines = groupInterest.holders.keys.map {
            InterestDirectory.groupLine(pattern: $0.pattern, group: $0.group)
        }
        var value = InterestDirectory.encode(interest.holders.keys.map(\.string) + groupLines)
        acks.entrySaysEverything = value.count > ClusterAcks.maxEntryBytes
        if acks.entrySaysEverything {
            logger.warning("cluster: this node's patterns exceed the interest entry; it tells the others '>'")
            value = InterestDirectory.encode([">"])
        }
        bucket.put(origin, value) { [self] result in
            acks.isPutting = false
            if case .failure(let error) = result { logger.debug("cluster: the interest entry was not put: \(error)") }
            if acks.needsPut { putInterest() }
        }
    }

    /// Another node's entry changed (this node's own is skipped).
    private func interestWatched(_ event: KeyValueWatchEvent) {
        guard case .entry(let entry) = event, entry.key != origin else { return }
        if entry.operation == .put {
            let patterns = InterestDirectory.decode(entry.value)
            if acks.directory.update(origin: entry.key, patterns: patterns, now: ClusterAcks.now()) {
                logger.info("cluster: node \(entry.key) is in the interest bucket")
            }
            let grouped = patterns.count { $0.utf8.contains(UInt8(ascii: " ")) }
            logger.debug("cluster: node \(entry.key) holds \(patterns.count - grouped) pattern(s) upstream")
            if grouped > 0 { logger.debug("cluster: node \(entry.key) holds \(grouped) pattern(s) in groups upstream") }
        } else if acks.directory.remove(origin: entry.key) {
            logger.info("cluster: node \(entry.key) left the interest bucket")
        }
    }

    /// Stops the heartbeat and the watch (at shutdown).
    func stopInterest() {
        acks.timer?.cancel()
        acks.timer = nil
        acks.watcher?.stop()
        acks.watcher = nil
    }
}
