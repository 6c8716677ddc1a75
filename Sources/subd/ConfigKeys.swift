import Logging
import SubscriptionServer
import SubscriptionState
import Yams

/// One key of the configuration file, as config/subd.yaml documents it and `subd --print-config-keys` lists it.
struct ConfigKeyInfo: Sendable {
    /// What a key holds when neither the command line, the environment nor the file sets it.
    enum Default: Sendable, Equatable {
        /// This value, written as in the YAML file (`65536`, `"0660"`, `[]`, `turn`).
        case value(String)
        /// No value: the key is unset until it is given; the text says what that means.
        case unset(String)
    }

    /// The key as written: `max_line`; a field of a mapping `cluster.node`; of each entry of a list `users[].name`.
    var name: String
    /// How its value is read: `a whole number`, `seconds`, ...
    var kind: String
    /// Its built-in default.
    var defaultValue: Default

    /// The line `subd --print-config-keys` prints: the name, the kind and `default <yaml>` or `unset <meaning>`,
    /// separated by tabs.
    var listing: String {
        switch defaultValue {
        case .value(let text): "\(name)\t\(kind)\tdefault \(text)"
        case .unset(let meaning): "\(name)\t\(kind)\tunset \(meaning)"
        }
    }

    /// `text` as a YAML double-quoted scalar.
    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// `values` as a YAML flow sequence of double-quoted strings: `[]`, `["a", "b"]`.
    static func list(_ values: [String]) -> String {
        "[" + values.map(quoted).joined(separator: ", ") + "]"
    }

    /// A number of seconds as the file writes it: `10`, `0.5`.
    static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

/// A field of a mapping read by hand from the YAML document (`users:` entries, `cluster:`): its documentation and
/// how it is read into `Draft`, the value being built, whose initial values are the fields' defaults.
struct ConfigField<Draft>: Sendable {
    /// The field's name (without its parent's), kind and default.
    var info: ConfigKeyInfo
    /// Reads the field's node (never null) into the draft; `fail` makes an error naming the field.
    var read: Reader
    /// For a required field, the problem its absence is (`must name this node ...`); nil for an optional one.
    var missing: String?

    /// How a field is read.
    typealias Reader =
        @Sendable (_ node: Node, _ draft: inout Draft, _ fail: (String) -> ConfigurationError)
        throws(ConfigurationError) -> Void

    /// The optional field named `name` of kind `kind`, whose default is `defaultValue`.
    init(_ name: String, _ kind: String, _ defaultValue: ConfigKeyInfo.Default, read: @escaping Reader) {
        info = ConfigKeyInfo(name: name, kind: kind, defaultValue: defaultValue)
        self.read = read
    }

    /// The required field named `name` of kind `kind`; leaving it out is the problem `missing`.
    init(_ name: String, _ kind: String, missing: String, read: @escaping Reader) {
        info = ConfigKeyInfo(name: name, kind: kind, defaultValue: .unset("required"))
        self.read = read
        self.missing = missing
    }

    /// Reads `mapping` into `draft` by `fields`, in their order: the first required field left out, or field that
    /// does not read, is the error `fail(field, problem)` makes.
    static func read(
        _ fields: [ConfigField], from mapping: Node.Mapping, into draft: inout Draft,
        fail: (_ field: String, _ problem: String) -> ConfigurationError
    ) throws(ConfigurationError) {
        for field in fields {
            let name = field.info.name
            guard let node = mapping[name], node.null == nil else {
                if let missing = field.missing { throw fail(name, missing) }
                continue
            }
            try field.read(node, &draft) { problem in fail(name, problem) }
        }
    }
}

extension ConfigLoader {
    /// One top-level key of the file: its documentation, and how the loader reads it into ``Loaded``.
    struct Setting: Sendable {
        /// Name, kind and default.
        var info: ConfigKeyInfo
        /// True for a key read by hand from the YAML document (`users`, `cluster`) rather than through
        /// swift-configuration (so it is never read from the environment).
        var fromDocumentOnly: Bool
        /// Reads the key into `loaded`, which holds the defaults until then; a key that is not set leaves it.
        var read: Reader

        /// How a key is read.
        typealias Reader = @Sendable (_ loader: ConfigLoader, _ loaded: inout Loaded) throws(ConfigurationError) -> Void

        /// The key `name` of kind `kind`, whose default is `defaultValue`, read by `read`.
        init(
            _ name: String, _ kind: String, _ defaultValue: ConfigKeyInfo.Default, fromDocumentOnly: Bool = false,
            read: @escaping Reader
        ) {
            info = ConfigKeyInfo(name: name, kind: kind, defaultValue: defaultValue)
            self.fromDocumentOnly = fromDocumentOnly
            self.read = read
        }
    }

    /// The settings subd runs with when nothing is configured: every default below comes from here.
    static let defaults = Loaded(server: ServerConfiguration(), logLevel: .info, file: nil, cluster: nil)

    /// Every top-level key subd reads, in the order of config/subd.yaml, with its default and how it is read: the one
    /// table the loader reads the file by (``load(_:)``), refuses unknown keys by, and `subd --print-config-keys`
    /// prints. The defaults are those of ``defaults`` (``ServerConfiguration``'s own), written as the file writes
    /// them.
    static let settings: [Setting] = [
        Setting(
            "listen",
            "a list of HOST:PORT, [IPv6]:PORT, unix:PATH, tls://HOST:PORT, ws://HOST:PORT/PATH, wss://HOST:PORT/PATH, "
                + "mqtt://HOST:PORT or mqtts://HOST:PORT",
            .value(
                ConfigKeyInfo.list(
                    defaults.server.listen.map(\.endpoint)
                        + defaults.server.tlsListen.map { tlsScheme + $0.endpoint }
                        + defaults.server.webSocketListen.map(\.entry) + defaults.server.mqttListen.map(\.entry)))
        ) { loader, loaded throws(ConfigurationError) in
            guard let listen = try loader.strings("listen") else { return }
            var addresses: [ListenAddress] = []
            var tlsAddresses: [ListenAddress] = []
            var webSocketListeners: [WebSocketListen] = []
            var mqttListeners: [MQTTListen] = []
            for text in listen {
                if let webSocket = try WebSocketListen(parsing: text) {
                    webSocketListeners.append(webSocket)
                } else if let mqtt = try MQTTListen(parsing: text) {
                    mqttListeners.append(mqtt)
                } else if text.hasPrefix(tlsScheme) {
                    tlsAddresses.append(try ListenAddress(parsing: String(text.dropFirst(tlsScheme.count))))
                } else {
                    addresses.append(try ListenAddress(parsing: text))
                }
            }
            loaded.server.listen = addresses
            loaded.server.tlsListen = tlsAddresses
            loaded.server.webSocketListen = webSocketListeners
            loaded.server.mqttListen = mqttListeners
        },
        credential("tls_cert", \.server.tlsCertificate, unset: "none: tls:// listeners cannot start"),
        credential("tls_key", \.server.tlsKey, unset: "none: tls:// listeners cannot start"),
        credential("tls_client_ca", \.server.tlsClientCA, unset: "none: no client certificate is asked for"),
        Setting(
            "websocket_origins", "a list of origins (scheme://host[:port]); [] lets in any",
            .value(ConfigKeyInfo.list(defaults.server.webSocketOrigins))
        ) { loader, loaded throws(ConfigurationError) in
            if let origins = try loader.strings("websocket_origins") { loaded.server.webSocketOrigins = origins }
        },
        Setting("web_console", "true or false", .value(String(defaults.server.webConsole))) {
            loader, loaded throws(ConfigurationError) in
            loaded.server.webConsole = try loader.bool("web_console", default: loaded.server.webConsole)
        },
        Setting("mqtt_create", "auto or never", .value(defaults.server.mqtt.create.rawValue)) {
            loader, loaded throws(ConfigurationError) in
            guard let text = try loader.string("mqtt_create") else { return }
            guard let policy = MQTTCreatePolicy(rawValue: text) else {
                throw ConfigurationError(key: "mqtt_create", problem: "'\(text)' is not auto or never")
            }
            loaded.server.mqtt.create = policy
        },
        int("mqtt_session_expiry", \.server.mqtt.sessionExpiryMax, kind: "whole seconds; 0 keeps no session"),
        int("mqtt_receive_maximum", \.server.mqtt.receiveMaximum),
        int("mqtt_topic_alias_maximum", \.server.mqtt.topicAliasMaximum, kind: "a whole number; 0 for none"),
        int("mqtt_keepalive_max", \.server.mqtt.keepAliveMax, kind: "whole seconds; 0 for no limit"),
        optionalString("unix_socket", "a path; \"\" for none", \.server.unixSocket, unset: "none: no Unix socket"),
        Setting(
            "unix_socket_mode", "octal permission bits",
            .value(ConfigKeyInfo.quoted(octal(defaults.server.unixSocketMode)))
        ) { loader, loaded throws(ConfigurationError) in
            guard let mode = try loader.string("unix_socket_mode") else { return }
            guard let bits = UInt32(mode, radix: 8), bits <= 0o777 else {
                throw ConfigurationError(
                    key: "unix_socket_mode", problem: "'\(mode)' is not octal permission bits such as 0660")
            }
            loaded.server.unixSocketMode = bits
        },
        Setting("numbers", "a list of numbers", .value(ConfigKeyInfo.list(defaults.server.numbers))) {
            loader, loaded throws(ConfigurationError) in
            if let numbers = try loader.strings("numbers") { loaded.server.numbers = numbers }
        },
        int("max_line", \.server.maxLine),
        int("max_payload", \.server.maxPayload),
        int("max_pending", \.server.maxPending),
        Setting("threads", "a whole number; 1 for one thread", .unset("the number of cores subd may run on")) {
            loader, loaded throws(ConfigurationError) in
            loaded.server.threads = try loader.int("threads", default: loaded.server.threads)
        },
        int("max_connections", \.server.maxConnections),
        int("max_subscriptions", \.server.maxSubscriptions),
        int("max_numbers", \.server.maxNumbers),
        optionalString("auth_token", "a secret; \"\" for none", \.server.authToken, unset: "none: no shared secret"),
        Setting(
            "users", "a list of users (mappings of the users[] fields)",
            defaults.server.users.isEmpty ? .unset("no users") : .value("(users)"), fromDocumentOnly: true
        ) { loader, loaded throws(ConfigurationError) in
            guard let document = loader.document else { return }
            loaded.server.users = try UsersConfig.accounts(in: document)
        },
        int("tcp_keepalive_idle", \.server.tcpKeepalive.idle, kind: "whole seconds; 0 for off"),
        int("tcp_keepalive_interval", \.server.tcpKeepalive.interval, kind: "whole seconds"),
        int("tcp_keepalive_count", \.server.tcpKeepalive.count),
        seconds("command_timeout", \.server.commandTimeout),
        seconds("auth_timeout", \.server.authTimeout),
        seconds("auth_failure_delay", \.server.authFailureDelay),
        seconds("sys_interval", \.server.sysInterval),
        Setting(
            "metrics_listen", "HOST:PORT; \"\" for none",
            defaults.server.metricsListen.map { .value(ConfigKeyInfo.quoted($0.endpoint)) }
                ?? .unset("none: no metrics endpoint")
        ) { loader, loaded throws(ConfigurationError) in
            guard let address = try loader.string("metrics_listen") else { return }
            loaded.server.metricsListen =
                address.isEmpty ? nil : try ListenAddress(parsing: address, key: "metrics_listen")
        },
        int("metrics_top_numbers", \.server.metricsTopNumbers),
        Setting(
            "state_dir", "a directory; \"\" for none",
            defaults.server.stateDirectory.map { .value(ConfigKeyInfo.quoted($0)) }
                ?? .unset("systemd's $STATE_DIRECTORY when it is set, else none")
        ) { loader, loaded throws(ConfigurationError) in
            loaded.server.stateDirectory = try loader.stateDirectory()
        },
        Setting("fsync", "turn or everysec", .value(defaults.server.fsync.configurationValue)) {
            loader, loaded throws(ConfigurationError) in
            guard let text = try loader.string("fsync") else { return }
            guard let policy = FsyncPolicy(configurationValue: text) else {
                throw ConfigurationError(key: "fsync", problem: "'\(text)' is not turn or everysec")
            }
            loaded.server.fsync = policy
        },
        Setting(
            "cluster", "a mapping of the cluster fields",
            defaults.cluster == nil ? .unset("none: a single node") : .value("(cluster)"), fromDocumentOnly: true
        ) { loader, loaded throws(ConfigurationError) in
            guard let document = loader.document else { return }
            loaded.cluster = try ClusterConfig.settings(in: document)
        },
        Setting(
            "log_level", "trace, debug, info, notice, warning, error or critical", .value(defaults.logLevel.rawValue)
        ) { loader, loaded throws(ConfigurationError) in
            guard let text = try loader.string("log_level") else { return }
            guard let level = Logger.Level(rawValue: text.lowercased()) else {
                throw ConfigurationError(
                    key: "log_level",
                    problem: "'\(text)' is not one of trace, debug, info, notice, warning, error, critical")
            }
            loaded.logLevel = level
        },
    ]

    /// Every key of the file, nested fields included (`users[].name`, `cluster.node`), in the file's order: what
    /// `subd --print-config-keys` prints.
    static var allKeys: [ConfigKeyInfo] {
        settings.flatMap { setting -> [ConfigKeyInfo] in
            switch setting.info.name {
            case "users": [setting.info] + UsersConfig.fields.map { nested($0.info, in: "users[]") }
            case "cluster": [setting.info] + ClusterConfig.fields.map { nested($0.info, in: "cluster") }
            default: [setting.info]
            }
        }
    }

    private static func nested(_ info: ConfigKeyInfo, in parent: String) -> ConfigKeyInfo {
        ConfigKeyInfo(name: parent + "." + info.name, kind: info.kind, defaultValue: info.defaultValue)
    }

    private static func octal(_ bits: UInt32) -> String {
        let digits = String(bits, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    // MARK: Kinds of settings

    private static func int(
        _ name: String, _ path: WritableKeyPath<Loaded, Int> & Sendable, kind: String = "a whole number"
    ) -> Setting {
        Setting(name, kind, .value(String(defaults[keyPath: path]))) { loader, loaded throws(ConfigurationError) in
            loaded[keyPath: path] = try loader.int(name, default: loaded[keyPath: path])
        }
    }

    /// A number of seconds, whole or not (`30`, `0.5`).
    private static func seconds(_ name: String, _ path: WritableKeyPath<Loaded, Double> & Sendable) -> Setting {
        Setting(name, "seconds (fractions allowed)", .value(ConfigKeyInfo.seconds(defaults[keyPath: path]))) {
            loader, loaded throws(ConfigurationError) in
            loaded[keyPath: path] = try loader.seconds(name, default: loaded[keyPath: path])
        }
    }

    /// A string where `""` means none, as does leaving it out (when the default is none).
    private static func optionalString(
        _ name: String, _ kind: String, _ path: WritableKeyPath<Loaded, String?> & Sendable, unset: String,
        parse: @escaping @Sendable (String) throws(ConfigurationError) -> String = { $0 }
    ) -> Setting {
        Setting(name, kind, defaults[keyPath: path].map { .value(ConfigKeyInfo.quoted($0)) } ?? .unset(unset)) {
            loader, loaded throws(ConfigurationError) in
            guard let text = try loader.string(name) else { return }
            loaded[keyPath: path] = text.isEmpty ? nil : try parse(text)
        }
    }

    /// A file path that may name a systemd credential (``credentialPath(_:_:)``).
    private static func credential(
        _ name: String, _ path: WritableKeyPath<Loaded, String?> & Sendable, unset: String
    ) -> Setting {
        optionalString(name, "a PEM file path or credential:NAME; \"\" for none", path, unset: unset) {
            text throws(ConfigurationError) in try credentialPath(text, name)
        }
    }
}
