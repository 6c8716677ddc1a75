import CSubdShim
import SubscriptionCenter
import SubscriptionState
import SubscriptionWire

/// A configuration value that cannot be used: names the key and the problem in one line.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    /// The configuration key, as written in `config/subd.yaml` (e.g. `max_line`).
    public var key: String
    /// What is wrong with its value, and what would be right.
    public var problem: String

    /// Makes an error for `key`.
    public init(key: String, problem: String) {
        self.key = key
        self.problem = problem
    }

    public var description: String { "\(key): \(problem)" }
}

/// Everything the server engine needs to know; `subd` fills it from config file, environment and command line.
public struct ServerConfiguration: Sendable, Equatable {
    /// TCP (or `unix:`) addresses to listen on.
    public var listen: [ListenAddress] = [.tcp(host: "127.0.0.1", port: 7827)]
    /// TCP addresses to listen on with TLS (`listen` entries written `tls://HOST:PORT`); they need ``tlsCertificate``
    /// and ``tlsKey``.
    public var tlsListen: [ListenAddress] = []
    /// WebSocket listeners (`listen` entries written `ws://HOST:PORT/PATH` or `wss://HOST:PORT/PATH`); a `wss://` one
    /// needs ``tlsCertificate`` and ``tlsKey``.
    public var webSocketListen: [WebSocketListen] = []
    /// MQTT listeners (`listen` entries written `mqtt://HOST:PORT` or `mqtts://HOST:PORT`); an `mqtts://` one needs
    /// ``tlsCertificate`` and ``tlsKey``.
    public var mqttListen: [MQTTListen] = []
    /// The `mqtt_*` keys.
    public var mqtt = MQTTSettings()
    /// `websocket_origins`: the `Origin` values a WebSocket upgrade may come from (an allow-list against other sites'
    /// pages in a browser); empty lets in any.
    public var webSocketOrigins: [String] = []
    /// `web_console`: every `ws://`/`wss://` listener also answers a plain HTTP `GET` of `/` with the web console and
    /// of `/subd.js` with the JavaScript client (``WebConsoleRoute``); false: upgrades only.
    public var webConsole = true
    /// `tls_cert`: the PEM file of the server's certificate chain (its own certificate first).
    public var tlsCertificate: String? = nil
    /// `tls_key`: the PEM file of the certificate's private key.
    public var tlsKey: String? = nil
    /// `tls_client_ca`: a PEM file of CA certificates; when set, TLS clients must present a certificate one of them
    /// signed, and a certificate whose subject CN is a configured user's name authenticates the session as that
    /// user.
    public var tlsClientCA: String? = nil
    /// A Unix socket path to serve as well; nil for none.
    public var unixSocket: String? = nil
    /// Permission bits of the Unix socket file.
    public var unixSocketMode: UInt32 = 0o660
    /// Subscription numbers created at start.
    public var numbers: [String] = []
    /// Longest command line in bytes.
    public var maxLine = 65_536
    /// Largest PUB/SEND payload in bytes.
    public var maxPayload = 1_048_576
    /// Most bytes of unsent output a session may hold: a subscriber whose next message would pass it is cut off.
    /// Counted as memory held (``OutputQueue/heldBytes``): each queued message's frame bytes, plus
    /// ``Publication/overhead`` (120) for one shared by reference, and the session's reply buffer and entry list.
    public var maxPending = 33_554_432
    /// `threads`: the threads that serve clients, the event loop and `threads` − 1 helpers that share its busy turns'
    /// writes (docs/ARCHITECTURE.md, "More than one core"); 1 is one thread for everything. The default is the number
    /// of cores subd may run on.
    public var threads = ServerConfiguration.coreCount
    /// The cores this process may run on (its CPU affinity, as `nproc` counts them), at least 1 and at most 1,024.
    /// A cgroup's CPU quota (a container limited to 2 CPUs on a larger host) is not seen: set `threads` there.
    public static let coreCount: Int = min(1024, Int(max(1, subd_available_cores())))
    /// Most client connections at once; more are refused with `-ERR LIMIT`.
    public var maxConnections = 10_000
    /// Most subscriptions one session may hold.
    public var maxSubscriptions = 10_000
    /// Most subscription numbers clients may have (the daemon's own `$SYS.` numbers do not count).
    public var maxNumbers = 100_000
    /// Secret that `HELLO token=` may present to authenticate with every right; nil for none. With it (or ``users``)
    /// set, a session may send only `HELLO`, `PING` and `QUIT` until it is authenticated.
    public var authToken: String? = nil
    /// The users (`users:`) who may authenticate with `HELLO name=<user> token=<secret>`, each with a salted hash of
    /// the secret and its own rights; empty for none (the default).
    public var users: [UserAccount] = []
    /// How long a SIGTERM drain may take before the remaining connections are dropped, in seconds. Not a key of the
    /// configuration file.
    public var drainSeconds = 5.0
    /// TCP keepalive on accepted connections (`tcp_keepalive_idle`, `_interval`, `_count`).
    public var tcpKeepalive = TCPKeepalive(idle: 60, interval: 15, count: 4)
    /// Seconds a started command may go without a new byte while subd reads the session; 0 is off.
    public var commandTimeout = 60.0
    /// With `auth_token` or `users` set, seconds a connection may stay without a successful HELLO; 0 is off.
    public var authTimeout = 10.0
    /// Seconds a failed `HELLO` waits for each failure so far on its connection (0.5 s, 1 s, ... by default).
    public var authFailureDelay = 0.5
    /// Where the created numbers and the retained values are kept across restarts (`subd-state.log` in it); nil
    /// for nowhere: a restart forgets them.
    public var stateDirectory: String? = nil
    /// When saved retained values reach the disk: every event-loop turn before its replies (the default), or once a
    /// second. `CREATE` and `REMOVE` are synced before their `+OK` either way.
    public var fsync = FsyncPolicy.default
    /// Seconds between two `$SYS.stats` notifications; 0 is off (the other `$SYS.` events are always posted).
    public var sysInterval = 10.0
    /// Where `GET /metrics` is served in the Prometheus text format (a TCP address); nil for nowhere (the default).
    public var metricsListen: ListenAddress? = nil
    /// How many of the busiest numbers (most messages published) the metrics show one by one; 0 for none.
    public var metricsTopNumbers = 20

    /// The defaults: subd's configuration table (`ConfigLoader.settings`) takes them from here, and
    /// `config/subd.yaml` shows them.
    public init() {}

    /// `command_timeout` and `auth_timeout` as the liveness check uses them.
    var liveness: LivenessPolicy {
        LivenessPolicy(
            commandTimeoutNanoseconds: LivenessPolicy.nanoseconds(commandTimeout),
            authTimeoutNanoseconds: LivenessPolicy.nanoseconds(authTimeout))
    }

    /// Checks ranges that the engine relies on; the error names the key.
    public func validate() throws(ConfigurationError) {
        func positive(_ value: Int, _ key: String, atLeast minimum: Int = 1) throws(ConfigurationError) {
            guard value >= minimum else {
                throw ConfigurationError(key: key, problem: "must be at least \(minimum), got \(value)")
            }
        }
        try positive(maxLine, "max_line", atLeast: 256)
        try positive(maxPayload, "max_payload", atLeast: 0)
        try positive(maxPending, "max_pending", atLeast: 1024)
        try positive(threads, "threads")
        guard threads <= 1024 else {
            throw ConfigurationError(key: "threads", problem: "must be at most 1024, got \(threads)")
        }
        // A message is framed with a header line of at most ~300 bytes; a max_pending that cannot hold one whole
        // largest message would cut off every subscriber of every large message.
        guard maxPending >= maxPayload + 512 else {
            throw ConfigurationError(
                key: "max_pending",
                problem: "must be at least max_payload + 512 (\(maxPayload + 512)), got \(maxPending)"
            )
        }
        try positive(maxConnections, "max_connections")
        try positive(maxSubscriptions, "max_subscriptions")
        try positive(maxNumbers, "max_numbers")
        // The kernel's own bounds for the three keepalive options.
        guard (0...32_767).contains(tcpKeepalive.idle) else {
            throw ConfigurationError(
                key: "tcp_keepalive_idle", problem: "must be 0 (off) to 32767 seconds, got \(tcpKeepalive.idle)")
        }
        guard (1...32_767).contains(tcpKeepalive.interval) else {
            throw ConfigurationError(
                key: "tcp_keepalive_interval", problem: "must be 1 to 32767 seconds, got \(tcpKeepalive.interval)")
        }
        guard (1...127).contains(tcpKeepalive.count) else {
            throw ConfigurationError(key: "tcp_keepalive_count", problem: "must be 1 to 127, got \(tcpKeepalive.count)")
        }
        let periods = [
            ("command_timeout", commandTimeout), ("auth_timeout", authTimeout), ("sys_interval", sysInterval),
            ("auth_failure_delay", authFailureDelay),
        ]
        for (key, seconds) in periods {
            guard seconds.isFinite, (0...86_400).contains(seconds) else {
                throw ConfigurationError(key: key, problem: "must be 0 (off) to 86400 seconds, got \(seconds)")
            }
        }
        if let metricsListen, case .unix = metricsListen {
            throw ConfigurationError(
                key: "metrics_listen", problem: "must be a TCP address HOST:PORT, got \(metricsListen)")
        }
        guard (0...NumberCounters.maxShown).contains(metricsTopNumbers) else {
            throw ConfigurationError(
                key: "metrics_top_numbers",
                problem: "must be 0 (none) to \(NumberCounters.maxShown), got \(metricsTopNumbers)")
        }
        guard unixSocketMode <= 0o777 else {
            throw ConfigurationError(key: "unix_socket_mode", problem: "must be octal permission bits such as 0660")
        }
        for number in numbers {
            do {
                try Names.checkNumber(number)
            } catch {
                throw ConfigurationError(key: "numbers", problem: "'\(number)' is not a valid number: it \(error)")
            }
            guard !Names.isSystem(number) else {
                throw ConfigurationError(
                    key: "numbers", problem: "'\(number)': numbers whose first token is $SYS are the daemon's")
            }
        }
        // String equality on purpose, not ExactName: two spellings of `café` are refused as one name listed twice
        // (a log or `from=` could not tell the two users apart).
        var userIndexes: [String: Int] = [:]
        for (index, user) in users.enumerated() {
            try user.validate(index: index)
            if let first = userIndexes.updateValue(index, forKey: user.name) {
                throw ConfigurationError(
                    key: UserAccount.configKey(index: index, name: user.name),
                    problem: "name is also users[\(first)]'s: each user is listed once")
            }
        }
        try positive(mqtt.receiveMaximum, "mqtt_receive_maximum")
        guard mqtt.receiveMaximum <= 65_535 else {
            throw ConfigurationError(key: "mqtt_receive_maximum", problem: "must be at most 65535")
        }
        try positive(mqtt.topicAliasMaximum, "mqtt_topic_alias_maximum", atLeast: 0)
        guard mqtt.topicAliasMaximum <= 65_535 else {
            throw ConfigurationError(key: "mqtt_topic_alias_maximum", problem: "must be at most 65535")
        }
        try positive(mqtt.sessionExpiryMax, "mqtt_session_expiry", atLeast: 0)
        try positive(mqtt.keepAliveMax, "mqtt_keepalive_max", atLeast: 0)
        guard mqtt.keepAliveMax <= 65_535 else {
            throw ConfigurationError(key: "mqtt_keepalive_max", problem: "must be at most 65535 seconds")
        }
        for address in tlsListen {
            guard case .tcp = address else {
                throw ConfigurationError(key: "listen", problem: "tls:// takes a TCP address HOST:PORT, got \(address)")
            }
        }
        if usesTLS {
            guard tlsCertificate != nil else {
                throw ConfigurationError(
                    key: "tls_cert", problem: "a tls://, wss:// or mqtts:// listener needs tls_cert and tls_key")
            }
            guard tlsKey != nil else {
                throw ConfigurationError(
                    key: "tls_key", problem: "a tls://, wss:// or mqtts:// listener needs tls_cert and tls_key")
            }
        }
        guard
            !listen.isEmpty || !tlsListen.isEmpty || !webSocketListen.isEmpty || !mqttListen.isEmpty
                || unixSocket != nil
        else {
            throw ConfigurationError(key: "listen", problem: "no listen address and no unix_socket: nothing to serve")
        }
    }

    /// True when a listener serves TLS (`tls://` or `wss://`): the server needs its certificate.
    var usesTLS: Bool {
        !tlsListen.isEmpty || webSocketListen.contains(where: \.isTLS) || mqttListen.contains(where: \.isTLS)
    }
}
