import SubscriptionWire

/// The daemon's own notifications (protocol 1.1, "System notifications"): numbers under `$SYS.` that subd creates at
/// start and publishes to itself, one JSON object per message. Every object starts with `event` (the number without
/// `$SYS.`, so a line of `subctl listen '$SYS.>'` says what it is) and `time` (UTC, ISO 8601). Clients may subscribe to
/// them (`$SYS.>`), never create, remove or publish to them; `>` and other patterns whose first token is a wildcard do
/// not match them.
enum SystemTopic: String, CaseIterable {
    /// The topic's name in its notifications' `event` field: the number without `$SYS.`.
    var event: String { String(rawValue.dropFirst(Names.systemPrefix.count)) }

    /// A client connected: `session`, `address`.
    case clientConnected = "$SYS.client.connected"
    /// A client's session ended: `session`, `name`, `address`, `reason` (as STATS `closed_<reason>` counts it).
    case clientDisconnected = "$SYS.client.disconnected"
    /// A number was created: `number`, `kind`, and the `session` and `name` that created it (none at start or reload).
    case numberCreated = "$SYS.number.created"
    /// A number was removed: `number`, `subscribers_told`, `session`, `name`.
    case numberRemoved = "$SYS.number.removed"
    /// A subscriber was cut off for passing `max_pending`: `session`, `name`, `pending_bytes`, `max_pending`.
    case slowConsumer = "$SYS.slow_consumer"
    /// A SIGHUP reload was applied: `numbers_created`, `needs_restart`.
    case configReloaded = "$SYS.config.reloaded"
    /// Every `sys_interval` seconds (10 by default): the STATS keys and values.
    case stats = "$SYS.stats"
    /// Every second while a session subscribes to it by this exact name (the web console's message rates):
    /// `interval_seconds`, `published` (the busiest numbers' messages published since counting began).
    case numbers = "$SYS.numbers"
    /// With `state_dir`: saving failed (a write or a sync): `error`, and `stopped` (true: changes are refused until a
    /// restart; false: each change tries again). Posted when saving goes from working to failing, or to stopped.
    case stateFailed = "$SYS.state.failed"
    /// With `state_dir`: a write worked again after failures: `failures` (STATS `state_failures`).
    case stateRecovered = "$SYS.state.recovered"
    /// With `cluster:`: every `sys_interval` seconds, one per node this node knows: `node`, `state`, `age_seconds`,
    /// `nodes`, then that node's STATS keys and values (``ClusterNodeTable``).
    case clusterNode = "$SYS.cluster.node"
    /// An MQTT session's queue of QoS 1 and 2 messages passed `max_pending` and messages are dropped: `client_id`,
    /// `connected`, `queued`, `queued_bytes`, `max_pending`. Once until the queue has room again.
    case mqttQueueFull = "$SYS.mqtt.queue_full"

    /// True for the topics that exist only with a state directory.
    var needsStateDirectory: Bool { self == .stateFailed || self == .stateRecovered }

    /// True for the topics that exist only with `cluster:`.
    var needsCluster: Bool { self == .clusterNode }

    /// True for the topics that exist only where MQTT clients may connect (an `mqtt://` or `mqtts://` listener, or a
    /// WebSocket one, whose clients may ask for the subprotocol `mqtt`).
    var needsMQTT: Bool { self == .mqttQueueFull }
}

/// One line of JSON: an object of string, integer, boolean and null fields, in the order given.
struct JSONObject {
    /// A field's value.
    enum Value {
        case string(String)
        case integer(Int64)
        case unsigned(UInt64)
        case bool(Bool)
        case strings([String])
        /// An object of counts, in the order given (`{"A":12,"B":3}`).
        case counts([(key: String, count: UInt64)])
        case null
    }

    private(set) var fields: [(key: String, value: Value)] = []

    /// An object with these fields.
    init(_ fields: [(key: String, value: Value)] = []) {
        self.fields = fields
    }

    /// The object as one line of JSON (no newline).
    var line: String {
        var out = "{"
        for (index, field) in fields.enumerated() {
            if index > 0 { out += "," }
            out += JSONText.quoted(field.key) + ":"
            switch field.value {
            case .string(let text): out += JSONText.quoted(text)
            case .integer(let number): out += String(number)
            case .unsigned(let number): out += String(number)
            case .bool(let flag): out += flag ? "true" : "false"
            case .strings(let texts): out += "[" + texts.map(JSONText.quoted).joined(separator: ",") + "]"
            case .counts(let counts):
                out +=
                    "{" + counts.map { JSONText.quoted($0.key) + ":" + String($0.count) }.joined(separator: ",") + "}"
            case .null: out += "null"
            }
        }
        return out + "}"
    }
}
