import Dispatch

/// What a watcher reports, on the client's queue.
public enum KeyValueWatchEvent: Equatable, Sendable {
    /// A key's new entry (a put, or a delete or purge marker), in revision order, each revision at most once.
    case entry(KeyValueEntry)
    /// The load is done: every key's latest entry up to now has been reported (after the first load, and after
    /// each reload that follows a reconnect or a gap in the live writes).
    case caughtUp
    /// A load failed (it is tried again after a second, as long as the watcher runs).
    case loadFailed(JetStreamError)
}

/// Watches a bucket: first every key's latest entry, then every write as it is stored, reloading what changed after
/// each reconnect.
///
/// How: a plain subscription to the bucket's republished writes (`<updatesPrefix>.<bucket>.>`), which carry only
/// writes the stream stored, with their revision, in the stream's order; a plain subscription to `$KV.<bucket>.>`
/// would also see writes the stream refused (a losing create or update). Once that subscription is in place (a
/// flush), the watcher loads the bucket through the stream's leader, one `STREAM.MSG.GET` with `next_by_subj` per
/// key, from the revision after the last one it reported (so a reload reads only keys changed since).
/// Live writes that arrive during a load wait and follow it; an entry at or below the last reported revision is
/// dropped, so nothing is reported twice. Writes made while the client was disconnected are found by the reload.
///
/// Every write the bucket stores takes the stream's next sequence, so a live write more than one after the last
/// revision reported shows a write whose republish never came (it is lost with the stream's leader when that server
/// fails, and the new leader's republishes may pass the old one's on the routes): the watcher then reloads from the
/// last revision it reported, and the live write waits behind the load. A gap whose writes are gone from the bucket
/// (another write of the key replaced them, or they expired) costs one load that finds nothing.
///
/// A lost republish with no live write after it shows no gap: with a `tailCheck` interval the watcher asks the stream
/// for its last revision that often (`STREAM.INFO`, while not loading), and when it is past the last one reported and
/// still is a moment later (``tailGrace``: a republish on its way has arrived by then), reloads. The watcher learns
/// such a write within about the interval, not at the next reconnect.
///
/// Confined to the client's queue (`@unchecked Sendable`). ``stop()`` ends it; a watcher not stopped lives as long
/// as its client's subscription.
public final class KeyValueWatcher: @unchecked Sendable {
    /// The bucket watched.
    public let bucket: KeyValueBucket
    /// The highest revision reported.
    public private(set) var lastRevision: UInt64 = 0
    private let handler: @Sendable (KeyValueWatchEvent) -> Void
    private var sid: UInt64?
    private var observer: UInt64?
    /// True while the watcher loads the bucket (at start, and after each reconnect): an entry reported meanwhile
    /// was read from the bucket, not seen live as it was stored. The handler may read it for the entry it is given
    /// (the live writes that arrived during a load are reported after it, with this false).
    public private(set) var isLoading = false
    private var needsReload = false
    /// How many times a live write showed that a write before it never came, and the watcher reloaded.
    public private(set) var gapsFound = 0
    /// How many times ``reloadNow()`` was called.
    public private(set) var reloadsAsked = 0
    /// How many times the tail check found a stored write that was never reported, and the watcher reloaded.
    public private(set) var tailsFound = 0
    /// How often the stream's last revision is checked (nil: never).
    public let tailCheck: Duration?
    /// How long a stored write past the last reported one may take to arrive before the tail check reloads.
    public static let tailGrace: Duration = .milliseconds(250)
    /// The highest last revision of the stream a tail check has reloaded for (it does not reload twice for one: a
    /// write that expired before the load read it stays unreported).
    private var tailReloadedThrough: UInt64 = 0
    private var waiting: [KeyValueEntry] = []
    private var isStopped = false

    /// Starts watching `bucket`; `handler` gets every event on the client's queue. With `tailCheck`, the stream's
    /// last revision is checked that often (see above).
    ///
    /// - Throws: ``JetStreamError/notWatchable(bucket:)`` for a bucket that republishes nothing, and the
    ///   subscription's error.
    public init(
        bucket: KeyValueBucket, tailCheck: Duration? = nil,
        handler: @escaping @Sendable (KeyValueWatchEvent) -> Void
    ) throws(JetStreamError) {
        guard let prefix = bucket.updatesSubjectPrefix else { throw .notWatchable(bucket: bucket.name) }
        self.bucket = bucket
        self.tailCheck = tailCheck
        self.handler = handler
        let client = bucket.client
        client.assertOnQueue()
        do throws(NATSError) {
            sid = try client.subscribe(subject: prefix + ">") { [self] message in live(message) }
        } catch {
            throw .client(error)
        }
        observer = client.addStatusObserver { [self] status in
            if case .connected = status { reload() }
        }
        reload()
        scheduleTailCheck()
    }

    /// Stops: no more events.
    public func stop() {
        bucket.client.assertOnQueue()
        guard !isStopped else { return }
        isStopped = true
        if let sid { bucket.client.unsubscribe(sid) }
        if let observer { bucket.client.removeStatusObserver(observer) }
        sid = nil
        observer = nil
        waiting = []
    }

    /// A republished write arrived.
    private func live(_ message: NATSMessage) {
        guard !isStopped else { return }
        switch KeyValueEntry.make(bucket: bucket.name, fromHeadersOf: message) {
        case .success(let entry):
            if !isLoading, entry.revision > lastRevision + 1 {
                gapsFound += 1
                reload()  // loading from here: the entry waits behind the load
            }
            if isLoading { waiting.append(entry) } else { report(entry) }
        case .failure:
            break  // not a stored write of this bucket
        }
    }

    /// Loads what changed since ``lastRevision`` now (once the subscription is known to the server), for a caller
    /// with reason to think a write's republish was lost that no later write shows (the bucket refused a write of
    /// a key at the revision this watcher reported last); live writes wait behind the load, and
    /// ``KeyValueWatchEvent/caughtUp`` follows it. Asked while a load is under way, one more follows that one.
    /// Counted in ``reloadsAsked``. On the client's queue.
    public func reloadNow() {
        bucket.client.assertOnQueue()
        reloadsAsked += 1
        reload()
    }

    /// Loads what changed since ``lastRevision``, once the subscription is known to the server.
    private func reload() {
        guard !isStopped else { return }
        guard !isLoading else {
            needsReload = true
            return
        }
        isLoading = true
        needsReload = false
        beginLoad()
    }

    /// Flushes (so the subscription is in place at the server, and at every server its interest reaches, before the
    /// first read), then loads. Live writes wait until the load is done.
    private func beginLoad() {
        guard !isStopped else { return }
        bucket.client.flush(timeout: bucket.timeout) { [self] result in
            switch result {
            case .success: load(from: lastRevision + 1)
            case .failure(let error): loadFailed(.client(error))
            }
        }
    }

    private func load(from revision: UInt64) {
        guard !isStopped else { return }
        bucket.next(from: revision) { [self] result in
            guard !isStopped else { return }
            switch result {
            case .success(let entry?):
                report(entry)
                load(from: entry.revision + 1)
            case .success(nil):
                isLoading = false
                let live = waiting
                waiting = []
                for entry in live { report(entry) }
                handler(.caughtUp)
                if needsReload { reload() }
            case .failure(let error):
                loadFailed(error)
            }
        }
    }

    /// A load failed: it starts again in a second. The watcher stays loading meanwhile, so live writes keep
    /// waiting behind it (reporting one would move ``lastRevision`` past writes the load has not read yet).
    private func loadFailed(_ error: JetStreamError) {
        guard !isStopped else { return }
        handler(.loadFailed(error))
        bucket.client.queue.asyncAfter(deadline: .now() + .seconds(1)) { [self] in
            needsReload = false
            beginLoad()
        }
    }

    // MARK: The tail check

    private func scheduleTailCheck() {
        guard let tailCheck, !isStopped else { return }
        after(tailCheck) { [self] in checkTail() }
    }

    /// Asks for the stream's last revision; one past the last reported is looked at again after ``tailGrace``.
    private func checkTail() {
        guard !isStopped else { return }
        guard !isLoading, bucket.client.isConnected else { return scheduleTailCheck() }
        bucket.lastRevision { [self] result in
            guard case .success(let last) = result, last > max(lastRevision, tailReloadedThrough) else {
                return scheduleTailCheck()
            }
            after(Self.tailGrace) { [self] in
                if !isStopped, !isLoading, lastRevision < last {
                    tailsFound += 1
                    tailReloadedThrough = last
                    reload()
                }
                scheduleTailCheck()
            }
        }
    }

    private func after(_ delay: Duration, _ body: @escaping @Sendable () -> Void) {
        let nanoseconds = Int(clamping: NATSConnectionStateMachine.nanoseconds(delay))
        bucket.client.queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: body)
    }

    private func report(_ entry: KeyValueEntry) {
        guard entry.revision > lastRevision else { return }
        lastRevision = entry.revision
        handler(.entry(entry))
    }
}
