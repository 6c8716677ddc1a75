import Dispatch
import Logging
import SubscriptionNATS
import SubscriptionProtocol
import SubscriptionServer
import SubscriptionWire

/// Joins this subd node to the others through NATS (docs/CLUSTER.md): one ``NATSClient`` on the server's queue, the
/// shared numbers bucket `subd_numbers` (created by the first node that finds it missing, watched by every node), and
/// publications on `subd.m.<number>` with one upstream subscription per distinct pattern the node's sessions hold.
///
/// It is the server's ``ClusterLink``: the command handlers call it for `CREATE`, `REMOVE`, `PUB`/`SEND`, `SUB` and
/// `UNSUB`; it applies what the other nodes did through the server's `applyCluster…`/`deliverFromCluster` methods.
/// Confined to the server's queue (`@unchecked Sendable`): every callback of the client runs there.
///
/// Parts: numbers (`ClusterBridge+Numbers.swift`), publications and interest (`ClusterBridge+Messages.swift`), the
/// cross-node `+OK` (`ClusterBridge+Acks.swift`, `ClusterBridge+Interest.swift`; for `REMOVE` and retained values
/// `ClusterBridge+WriteAcks.swift`), retained numbers
/// (`ClusterBridge+Retained.swift`), queue groups (`ClusterBridge+Groups.swift`).
public final class ClusterBridge: ClusterLink, @unchecked Sendable {
    /// The name of the shared numbers bucket.
    public static let numbersBucket = "subd_numbers"
    /// How long each bucket call may take: an attempt to make or open the bucket (JetStream without a leader does not
    /// answer), and each call a `CREATE` or `REMOVE` makes.
    static let bucketTimeout: Duration = .seconds(2)
    /// How long to wait before trying again to make or open the bucket.
    static let bucketRetry: DispatchTimeInterval = .milliseconds(500)

    /// How often the watches of the numbers and retained buckets ask for the stream's last revision
    /// (``KeyValueWatcher/tailCheck``): a stored write whose republish was lost, with no write after it, is read
    /// within about this long. One `STREAM.INFO` per bucket and node each time.
    static let tailCheck: Duration = .seconds(2)

    /// What a watcher found missing in its live writes and read from its bucket, for its caught-up log line: empty
    /// when nothing, else ` (gaps in its live writes read from it so far: 1; ...)`.
    static func repairs(of watcher: KeyValueWatcher?) -> String {
        guard let watcher else { return "" }
        var found: [String] = []
        if watcher.gapsFound > 0 { found.append("gaps in its live writes read from it so far: \(watcher.gapsFound)") }
        if watcher.tailsFound > 0 { found.append("unreported writes found at its end: \(watcher.tailsFound)") }
        if watcher.reloadsAsked > 0 {
            found.append("reads for writes that lost to an unseen value: \(watcher.reloadsAsked)")
        }
        return found.isEmpty ? "" : " (\(found.joined(separator: "; ")))"
    }

    /// The `cluster:` settings the node started with.
    public let settings: ClusterSettings
    let logger: Logger
    /// The server this bridge serves (strong: the server lives as long as the daemon, and so does its bridge).
    let server: Server
    /// The NATS client, on the server's queue.
    let client: NATSClient
    /// This start's origin id: the node's name and a random suffix, so a restarted node is a new origin.
    let origin: String
    /// The subject the other nodes confirm this node's publications to (`subd.ack.<origin>`), made once: with `ack:
    /// all` every batch names it.
    let ackSubject: String
    /// `ack_timeout` in nanoseconds, worked out once (every waiting publication's deadline adds it).
    let ackTimeoutNanoseconds: UInt64
    /// The counter of this node's publications (`Subd-Id`).
    var counter: UInt64 = 0
    /// The numbers bucket, once made or opened.
    var bucket: KeyValueBucket?
    /// Its watcher.
    var watcher: KeyValueWatcher?
    /// True while a make-or-open of the bucket is under way.
    var isOpeningBucket = false
    /// The numbers this node is removing (its sessions' `REMOVE`s under way), with the subscribers told `GONE` here
    /// so far: the bucket's watch may remove a number here before the bucket's answer to the delete arrives.
    var removing: [String: Int] = [:]
    /// Holders per pattern.
    var interest = UpstreamInterest()
    /// The upstream subscription of each held pattern.
    var upstream: [ExactName: UInt64] = [:]
    /// The per-origin dedupe.
    var origins = OriginCounters()
    /// The last NATS error logged at warning, until the next connection.
    var lastError: String?
    /// True once an end of turn is scheduled for what arrived from NATS.
    var isTurnEndScheduled = false
    /// This turn's publications to one number, not sent yet (``sendBatch()``).
    var batch = PublicationBatch()
    /// True once the end of this turn is to send ``batch``.
    var isBatchSendScheduled = false
    /// Publications that could not be handed to NATS (its buffer full, over its `max_payload`).
    var dropped: UInt64 = 0
    /// The cross-node `+OK` (`ClusterBridge+Acks.swift`, `ClusterBridge+Interest.swift`).
    var acks = ClusterAcks()
    /// Whether both watches delivered their bucket's current values since the last connect (``notCaughtUp``).
    var catchUp = CatchUp()
    /// The retained bucket, its watch and the cache it feeds (`ClusterBridge+Retained.swift`).
    var retained = RetainedBridgeState()
    /// Holders per (pattern, queue group), their queue subscriptions and each group's dedupe.
    var groupInterest = GroupInterest()
    /// Publications of other nodes that arrived (each once, however many copies: ``arrivals``).
    var received: UInt64 = 0
    /// The last counter seen per origin, over every copy (plain and groups'), for ``received``.
    var arrivals = OriginCounters()

    /// A bridge for `server` with `settings`; nothing happens before ``start()``. Attach it with
    /// `server.cluster = bridge` before the server starts.
    public init(server: Server, settings: ClusterSettings, logger: Logger) {
        self.server = server
        self.settings = settings
        self.logger = logger
        self.client = NATSClient(queue: server.queue, logger: logger)
        self.origin = "\(settings.node)-\(String(UInt64.random(in: 1...UInt64.max), radix: 36))"
        self.ackSubject = BridgeHeaders.ackSubject(of: origin)
        self.ackTimeoutNanoseconds = settings.ackTimeout.dispatchNanoseconds
    }

    /// Starts connecting (from any thread; it hops onto the server's queue). The node serves its own sessions at once;
    /// `CREATE`/`REMOVE` answer `-ERR LIMIT` until the bucket is open.
    public func start() throws {
        try server.queue.sync {
            client.onStatusChange = { [self] status in statusChanged(status) }
            client.onError = { [self] error in natsFailed(error) }
            let options = NATSClientOptions(
                name: "subd \(settings.node)", echo: false, authentication: settings.authentication,
                connectTimeout: .seconds(2), reconnectWait: .milliseconds(500), pingInterval: .seconds(10))
            do {
                try client.connect(servers: settings.servers, options: options)
            } catch {
                throw ConfigurationError(key: "cluster.servers", problem: "\(error)")
            }
            startConfirmations()
            startStatsSharing()
        }
        let servers = settings.servers.map(\.description).joined(separator: ", ")
        logger.info("cluster: node \(settings.node) (origin \(origin)) joining through \(servers)")
    }

    /// Closes the NATS connection (at shutdown). On the server's queue (where the server's shutdown completion runs).
    public func stop() {
        dispatchPrecondition(condition: .onQueue(server.queue))
        watcher?.stop()
        watcher = nil
        stopInterest()
        retained.watcher?.stop()
        client.close()
    }

    /// Logs connection changes; the first connection opens the bucket.
    private func statusChanged(_ status: NATSStatus) {
        switch status {
        case .connected(let address, let info):
            lastError = nil
            logger.info("cluster: connected to NATS at \(address)")
            checkMaxPayload(info)
            subscribeMissingUpstream()
            openBucketIfNeeded()
            openInterestIfNeeded()
            openRetainedBucketIfNeeded()
        case .disconnected(let reason):
            catchUp.disconnected()
            let meanwhile =
                "local publish and subscribe of plain numbers go on; CREATE, REMOVE, and PUB, GET and SUB of "
                + "a retained number answer -ERR LIMIT until the buckets are read again"
            logger.warning("cluster: lost NATS (\(reason)); \(meanwhile)")
        case .closed(let reason):
            if let reason {
                logger.error("cluster: NATS client closed (\(reason))")
            } else {
                logger.info("cluster: NATS client closed")
            }
        }
    }

    /// A failed attempt or an error from NATS: logged at warning once, then at debug while it repeats (a wrong
    /// password is refused at every attempt, twice a second).
    private func natsFailed(_ error: NATSError) {
        let text = "\(error)"
        if text == lastError {
            logger.debug("cluster: NATS: \(text)")
        } else {
            lastError = text
            logger.warning("cluster: NATS: \(text) (repeats are logged at debug)")
        }
    }

    /// Room the bridge's headers may take next to a payload (`Subd-Id`, `Subd-From`, 16 info pairs at their longest).
    static let headerAllowance = 20 * 1024

    /// NATS must carry subd's largest publication with its headers; a smaller `max_payload` is a warning in the log
    /// (the larger publications stay on this node). Designed: refusing to start; built: this check at each connect.
    private func checkMaxPayload(_ info: NATSServerInfo) {
        let needed = server.configuredMaxPayload + Self.headerAllowance
        guard info.maxPayload < needed else { return }
        let advice =
            "larger publications reach this node's subscribers only; raise max_payload in nats-server's configuration"
        let limits = "the NATS server's max_payload (\(info.maxPayload)) is below subd's plus headers (\(needed))"
        logger.warning("cluster: \(limits): \(advice)")
    }

    /// `-ERR LIMIT` for a `GET` or `SUB` of a retained number until both watches caught up since the last connect.
    public var notCaughtUp: ProtocolError? {
        catchUp.reason.map { ProtocolError(.limit, $0) }
    }

    /// Ends the server's turn once for everything that arrived in this turn of the queue: the confirmations it made
    /// are written to NATS first (the publishing node's replies wait for them), then the sessions' output goes out.
    func scheduleTurnEnd() {
        guard !isTurnEndScheduled else { return }
        isTurnEndScheduled = true
        server.queue.async { [self] in
            isTurnEndScheduled = false
            sendConfirmations()
            server.endClusterTurn()
        }
    }
}
