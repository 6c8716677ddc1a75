/// What one scrape of `GET /metrics` shows, gathered on the event loop, and its text (``exposition()``).
///
/// Every STATS key has a metric (``statsKeys`` says which, and a unit test checks that none is missing): counters
/// end in `_total`, the `closed_*` counts are one counter with a `reason` label, and the STATS names that would clash
/// with Prometheus conventions are renamed (`total_connections` is `subd_accepted_connections_total`, `bytes_in` and
/// `bytes_out` are `subd_received_bytes_total` and `subd_sent_bytes_total`).
///
/// The text is written by ``MetricsExposition``, not by swift-prometheus 2.4: its registry holds live instruments
/// (atomic counters meant to be bumped where events happen, with no hook for values read at scrape time), while
/// subd's counters already live as plain integers on the event loop (3.8 ns for a message's three counts against
/// 10.6 ns with its counters). Mirroring them would mean resetting and re-incrementing every counter per scrape,
/// and registering and unregistering the busiest numbers' series as they come and go; and its text differs: every
/// gauge is a `Double` (`subd_connections 0.0`), counters are `Int64`, families and series come out in dictionary
/// order (not busiest first). The format itself is a few dozen lines (docs/ARCHITECTURE.md, Hand-written code and
/// why, has the measurements).
struct MetricsSnapshot {
    /// One of the busiest numbers.
    struct NumberSample: Equatable {
        /// The number.
        var number: String
        /// Messages published to it (since it was first counted).
        var published: UInt64
        /// Sessions a message to it would reach now (as `LIST` counts them).
        var subscribers: Int
    }

    /// The STATS counters and gauges.
    var stats: ServerStats
    /// Seconds since the server started.
    var uptimeSeconds: Double
    /// The busiest numbers, most messages first (at most `metrics_top_numbers`).
    var busiestNumbers: [NumberSample]
    /// What the process uses.
    var process: ProcessResources
    /// The cluster node's name (`cluster.node`), put on every sample as the `node` label so that one dashboard
    /// tells the nodes apart; nil on a single node, whose samples have no such label (Prometheus's own `instance`
    /// names the scraped target).
    var node: String? = nil

    /// The STATS keys the exposition covers, each with the metric that shows it.
    static let statsKeys: [String: String] = {
        var keys = [
            "version": "subd_build_info", "uptime_seconds": "subd_uptime_seconds", "connections": "subd_connections",
            "total_connections": "subd_accepted_connections_total", "numbers": "subd_numbers",
            "subscriptions": "subd_subscriptions", "messages_published": "subd_messages_published_total",
            "messages_delivered": "subd_messages_delivered_total", "bytes_in": "subd_received_bytes_total",
            "bytes_out": "subd_sent_bytes_total", "slow_consumers": "subd_slow_consumers_total",
            "protocol_errors": "subd_protocol_errors_total", "refused_connections": "subd_refused_connections_total",
            "accept_failures": "subd_accept_failures_total", "state_failures": "subd_state_failures_total",
            "auth_failures": "subd_auth_failures_total", "denied": "subd_denied_commands_total",
            "mqtt_sessions": "subd_mqtt_sessions", "mqtt_connects": "subd_mqtt_connects_total",
            "mqtt_refused": "subd_mqtt_refused_total", "mqtt_queue_dropped": "subd_mqtt_queue_dropped_total",
            "mqtt_sessions_expired": "subd_mqtt_sessions_expired_total", "mqtt_wills": "subd_mqtt_wills_total",
            "threads": "subd_threads", "helper_writes": "subd_helper_writes_total",
        ]
        for reason in CloseReason.allCases { keys["closed_\(reason.rawValue)"] = "subd_closed_connections_total" }
        keys["cluster_acks_waited"] = "subd_cluster_acks_waited_total"
        keys["cluster_ack_timeouts"] = "subd_cluster_ack_timeouts_total"
        keys["cluster_late_acks"] = "subd_cluster_late_acks_total"
        keys["cluster_dropped"] = "subd_cluster_dropped_total"
        keys["cluster_received"] = "subd_cluster_received_total"
        return keys
    }()

    /// The Prometheus text (``MetricsExposition/contentType``).
    func exposition() -> [UInt8] {
        var text = MetricsExposition(commonLabel: node.map { ("node", $0) })
        text.family("subd_build_info", .gauge, help: "Always 1; the version label is subd's version.")
        text.sample(labels: ["version": SubdVersion.current], 1)
        text.family("subd_uptime_seconds", .gauge, help: "Seconds since subd started.")
        text.sample(uptimeSeconds)

        text.single("subd_connections", .gauge, help: "Client connections open now.", UInt64(stats.connections))
        text.single(
            "subd_accepted_connections_total", .counter, help: "Client connections accepted (STATS total_connections).",
            stats.totalConnections)
        text.single("subd_numbers", .gauge, help: "Subscription numbers that exist.", UInt64(stats.numbers))
        text.single(
            "subd_subscriptions", .gauge, help: "Live subscriptions, all sessions.", UInt64(stats.subscriptions))
        text.single(
            "subd_messages_published_total", .counter, help: "PUB and SEND commands accepted.", stats.messagesPublished)
        text.single(
            "subd_messages_delivered_total", .counter,
            help: "Messages queued to subscribers (the sum of every +OK <n>).", stats.messagesDelivered)
        text.single(
            "subd_received_bytes_total", .counter, help: "Bytes read from clients (STATS bytes_in).", stats.bytesIn)
        text.single(
            "subd_sent_bytes_total", .counter, help: "Bytes written to clients (STATS bytes_out).", stats.bytesOut)
        text.single(
            "subd_slow_consumers_total", .counter, help: "Subscribers cut off for passing max_pending.",
            stats.slowConsumers)
        text.single(
            "subd_protocol_errors_total", .counter, help: "Malformed commands answered with -ERR by the parser.",
            stats.protocolErrors)
        text.single(
            "subd_refused_connections_total", .counter, help: "Connections refused at max_connections.",
            stats.refusedConnections)
        text.single(
            "subd_accept_failures_total", .counter,
            help: "Times accept(2) ran out of descriptors or memory and accepting paused.", stats.acceptFailures)
        text.single(
            "subd_state_failures_total", .counter, help: "Changes that could not be saved to state_dir.",
            stats.stateFailures)
        text.single("subd_auth_failures_total", .counter, help: "HELLOs that failed.", stats.authFailures)
        text.single(
            "subd_denied_commands_total", .counter, help: "Commands answered -ERR DENIED.", stats.denied)
        text.single(
            "subd_mqtt_sessions", .gauge,
            help: "MQTT clients' sessions held, connected or kept for a later connection.",
            UInt64(stats.mqttSessions))
        text.single("subd_mqtt_connects_total", .counter, help: "MQTT CONNECTs accepted.", stats.mqttConnects)
        text.single(
            "subd_mqtt_refused_total", .counter,
            help: "MQTT packets refused with a reason code, or acknowledged and dropped (3.1.1).", stats.mqttRefused)
        text.single(
            "subd_mqtt_queue_dropped_total", .counter,
            help: "QoS 1 and 2 messages dropped because an MQTT session's queue passed max_pending.",
            stats.mqttQueueDropped)
        text.single(
            "subd_mqtt_sessions_expired_total", .counter,
            help: "MQTT sessions that expired while their client was away.",
            stats.mqttSessionsExpired)
        text.single("subd_mqtt_wills_total", .counter, help: "MQTT will messages published.", stats.mqttWills)
        text.single("subd_threads", .gauge, help: "Threads serving clients (the threads key).", UInt64(stats.threads))
        text.single(
            "subd_helper_writes_total", .counter, help: "Writes to clients made by the event loop's helper threads.",
            stats.helperWrites)
        text.family(
            "subd_closed_connections_total", .counter, help: "Sessions closed, by the reason their close started with.")
        for reason in CloseReason.allCases {
            text.sample(labels: ["reason": reason.rawValue], stats.closed[reason] ?? 0)
        }
        if let cluster = stats.cluster {
            text.single(
                "subd_cluster_dropped_total", .counter,
                help: "Publications of this node that could not be handed to NATS (they stayed on this node).",
                cluster.dropped)
            text.single(
                "subd_cluster_received_total", .counter, help: "Publications of other nodes that reached this node.",
                cluster.received)
        }

        if let acks = stats.clusterAcks {
            text.single(
                "subd_cluster_acks_waited_total", .counter,
                help: "Publications and REMOVEs whose +OK waited for other nodes' receivers (ack: all).", acks.waited)
            text.single(
                "subd_cluster_ack_timeouts_total", .counter,
                help: "Of those, answered at ack_timeout with a node's count missing.", acks.timeouts)
            text.single(
                "subd_cluster_late_acks_total", .counter,
                help: "Other nodes' counts that came after the +OK (not in it).", acks.late)
        }

        text.family(
            "subd_number_messages_published_total", .counter,
            help: "Messages published to each of the busiest numbers (most messages; metrics_top_numbers of them).")
        for number in busiestNumbers { text.sample(labels: ["number": number.number], number.published) }
        text.family(
            "subd_number_subscribers", .gauge,
            help: "Sessions a message to each of the busiest numbers would reach now (as LIST counts them).")
        for number in busiestNumbers { text.sample(labels: ["number": number.number], number.subscribers) }

        if let bytes = process.residentBytes {
            text.single("process_resident_memory_bytes", .gauge, help: "Resident memory size in bytes.", bytes)
        }
        if let count = process.openDescriptors {
            text.single("process_open_fds", .gauge, help: "Number of open file descriptors.", UInt64(count))
        }
        if let limit = process.maxDescriptors {
            text.single("process_max_fds", .gauge, help: "Maximum number of open file descriptors.", limit)
        }
        if let seconds = process.cpuSeconds {
            text.family("process_cpu_seconds_total", .counter, help: "Total user and system CPU time spent in seconds.")
            text.sample(seconds)
        }
        return text.bytes
    }
}
