/// The daemon's counters, as STATS reports them.
public struct ServerStats: Sendable, Equatable {
    /// Connections open now.
    public var connections = 0
    /// Connections accepted since start.
    public var totalConnections: UInt64 = 0
    /// Subscription numbers that exist.
    public var numbers = 0
    /// Live subscriptions, all sessions.
    public var subscriptions = 0
    /// PUB and SEND commands that were accepted.
    public var messagesPublished: UInt64 = 0
    /// Messages queued to subscribers (the sum of every `+OK <receivers>`).
    public var messagesDelivered: UInt64 = 0
    /// Bytes read from clients.
    public var bytesIn: UInt64 = 0
    /// Bytes written to clients.
    public var bytesOut: UInt64 = 0
    /// Sessions closed since start, by why they closed.
    public var closed: [CloseReason: UInt64] = [:]
    /// Connections refused at `max_connections`.
    public var refusedConnections: UInt64 = 0
    /// Times accept(2) failed (out of descriptors or memory) and accepting paused.
    public var acceptFailures: UInt64 = 0
    /// Subscribers cut off for passing `max_pending`.
    public var slowConsumers: UInt64 { closed[.slowConsumer] ?? 0 }
    /// Malformed commands answered with -ERR by the parser.
    public var protocolErrors: UInt64 = 0
    /// `HELLO`s that failed (a wrong or missing secret, an unknown user).
    public var authFailures: UInt64 = 0
    /// Commands answered `-ERR DENIED` (a user without the right, or a write to a `$SYS.` number).
    public var denied: UInt64 = 0
    /// MQTT clients' CONNECTs accepted (`mqtt_connects`).
    public var mqttConnects: UInt64 = 0
    /// MQTT packets refused with a reason code, or acknowledged and dropped (3.1.1) (`mqtt_refused`).
    public var mqttRefused: UInt64 = 0
    /// QoS 1 and 2 messages dropped because an MQTT session's queue was full (`mqtt_queue_dropped`).
    public var mqttQueueDropped: UInt64 = 0
    /// MQTT sessions that expired while their client was away (`mqtt_sessions_expired`).
    public var mqttSessionsExpired: UInt64 = 0
    /// MQTT will messages published (`mqtt_wills`).
    public var mqttWills: UInt64 = 0
    /// MQTT sessions held now, connected or not (`mqtt_sessions`).
    public var mqttSessions = 0
    /// The threads serving clients (`threads`).
    public var threads = 1
    /// Writes made by the event loop's helper threads (`helper_writes`; docs/ARCHITECTURE.md, "More than one core").
    public var helperWrites: UInt64 = 0
    /// Changes that could not be saved to `state_dir` (a failed write or sync; the first is logged at critical).
    public var stateFailures: UInt64 = 0
    /// The cluster bridge's counters, with `cluster:`; nil on a single node (whose STATS has no `cluster_*` key).
    public var cluster: ClusterStatistics?

    /// The cross-node `+OK` counters, with `cluster:` only.
    public var clusterAcks: ClusterAckCounters?

    /// Makes zeroed counters.
    public init() {}

    /// The STATS lines, `key value` (docs/PROTOCOL.md lists the keys).
    func lines(uptime: Duration) -> [String] {
        [
            "version \(SubdVersion.current)",
            "uptime_seconds \(uptime.components.seconds)",
            "connections \(connections)",
            "total_connections \(totalConnections)",
            "numbers \(numbers)",
            "subscriptions \(subscriptions)",
            "messages_published \(messagesPublished)",
            "messages_delivered \(messagesDelivered)",
            "bytes_in \(bytesIn)",
            "bytes_out \(bytesOut)",
            "slow_consumers \(slowConsumers)",
            "protocol_errors \(protocolErrors)",
            "refused_connections \(refusedConnections)",
            "accept_failures \(acceptFailures)",
            "state_failures \(stateFailures)",
            "auth_failures \(authFailures)",
            "denied \(denied)",
            "mqtt_sessions \(mqttSessions)",
            "mqtt_connects \(mqttConnects)",
            "mqtt_refused \(mqttRefused)",
            "mqtt_queue_dropped \(mqttQueueDropped)",
            "mqtt_sessions_expired \(mqttSessionsExpired)",
            "mqtt_wills \(mqttWills)",
            "threads \(threads)",
            "helper_writes \(helperWrites)",
        ] + CloseReason.allCases.filter { $0 != .slowConsumer }.map { "closed_\($0.rawValue) \(closed[$0] ?? 0)" }
            + (cluster?.lines ?? []) + (clusterAcks?.lines ?? [])
    }
}

/// The daemon's version, shown by HELLO and STATS.
public enum SubdVersion {
    /// Semantic version of this build.
    public static let current = "0.1.0"
}
