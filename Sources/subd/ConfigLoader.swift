import Configuration
import Foundation
import Logging
import SubscriptionCluster
import SubscriptionServer
import SubscriptionState
import SystemPackage
import Yams

/// Reads subd's settings with swift-configuration: command line, then `SUBD_*` environment variables, then the
/// YAML file, then the built-in defaults (the same ones `config/subd.yaml` lists).
struct ConfigLoader {
    /// The settings subd runs with.
    struct Loaded {
        /// What the server engine needs.
        var server: ServerConfiguration
        /// The log level.
        var logLevel: Logger.Level
        /// The file that was read, if any.
        var file: String?
        /// The `cluster:` block (``ClusterConfig``); nil on a single node.
        var cluster: ClusterSettings?
    }

    /// The file read when `--config` is not given (only if it exists).
    static let defaultFile = "/etc/subd/subd.yaml"

    private let reader: ConfigReader

    private init(reader: ConfigReader) {
        self.reader = reader
    }

    /// Loads and checks the configuration. Every problem is a ``ConfigurationError`` naming the key.
    static func load(_ arguments: DaemonArguments) async throws(ConfigurationError) -> Loaded {
        var fromCommandLine: [AbsoluteConfigKey: ConfigValue] = [:]
        if !arguments.listen.isEmpty {
            fromCommandLine["listen"] = ConfigValue(.stringArray(arguments.listen), isSecret: false)
        }
        if let path = arguments.unixSocket {
            fromCommandLine["unix_socket"] = ConfigValue(.string(path), isSecret: false)
        }
        if let level = arguments.logLevel {
            fromCommandLine["log_level"] = ConfigValue(.string(level), isSecret: false)
        }
        var providers: [any ConfigProvider] = [
            InMemoryProvider(name: "command line", values: fromCommandLine),
            EnvironmentVariablesProvider(secretsSpecifier: .specific(["SUBD_AUTH_TOKEN"])).prefixKeys(with: "subd"),
        ]
        let file = arguments.configFile ?? defaultFile
        let text: String?
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            // Only a file named with --config must exist.
            guard arguments.configFile == nil else {
                throw ConfigurationError(key: "--config", problem: "cannot read '\(file)': \(error.localizedDescription)")
            }
            text = nil
        }
        var users: [UserAccount] = []
        var cluster: ClusterSettings?
        // A document of comments only (every key left at its default) has nothing for the file provider to read.
        if let text, let document = try Self.checkedDocument(of: text) {
            users = try UsersConfig.accounts(in: document)
            cluster = try ClusterConfig.settings(in: document)
            do {
                if document["users"] == nil && document["cluster"] == nil {
                    providers.append(try await FileProvider<YAMLSnapshot>(filePath: FilePath(file)))
                } else {
                    providers.append(try DocumentProvider(document, without: ["users", "cluster"], name: file))
                }
            } catch {
                throw ConfigurationError(key: "--config", problem: "cannot read '\(file)': \(error)")
            }
        }
        var loaded = try ConfigLoader(reader: ConfigReader(providers: providers)).settings(file: file, users: users)
        loaded.cluster = cluster
        return loaded
    }

    /// Every key subd reads, as written in the YAML file.
    static let knownKeys: Set<String> = [
        "listen", "unix_socket", "unix_socket_mode", "numbers", "max_line", "max_payload", "max_pending",
        "max_connections", "max_subscriptions", "max_numbers", "auth_token", "log_level",
        "tcp_keepalive_idle", "tcp_keepalive_interval", "tcp_keepalive_count", "command_timeout", "auth_timeout",
        "auth_failure_delay",
        "sys_interval",
        "metrics_listen", "metrics_top_numbers", "state_dir", "fsync", "users", "tls_cert", "tls_key", "tls_client_ca",
        "cluster",
    ]

    /// The prefix of a `listen` entry served with TLS: `tls://HOST:PORT`.
    static let tlsScheme = "tls://"

    /// Parses the YAML and refuses a top-level key subd does not know (a typo would otherwise be ignored without a
    /// word). Returns nil for an empty document (only comments), else the mapping of keys.
    static func checkedDocument(of text: String) throws(ConfigurationError) -> Node.Mapping? {
        let document: Node?
        do {
            document = try Yams.compose(yaml: text)
        } catch {
            // One line, as every configuration error is.
            let reason = "\(error)".split(whereSeparator: \.isNewline).joined(separator: "; ")
            throw ConfigurationError(key: "--config", problem: "not valid YAML: \(reason)")
        }
        guard let document else { return nil }
        guard let mapping = document.mapping else {
            throw ConfigurationError(key: "--config", problem: "the file must be a mapping of keys to values")
        }
        for key in mapping.keys {
            let name = key.string ?? "\(key)"
            guard !knownKeys.contains(name) else { continue }
            throw ConfigurationError(
                key: name, problem: "unknown key (known keys: \(knownKeys.sorted().joined(separator: ", ")))"
            )
        }
        return mapping.keys.isEmpty ? nil : mapping
    }

    /// `state_dir`; when the key is not set at all, systemd's `$STATE_DIRECTORY` (the unit's `StateDirectory=`, the
    /// first one when it lists several); `""` for none.
    private func stateDirectory() throws(ConfigurationError) -> String? {
        if let path = try string("state_dir") { return path.isEmpty ? nil : path }
        guard let value = getenv("STATE_DIRECTORY").map({ String(cString: $0) }),
            let first = value.split(separator: ":").first
        else { return nil }
        return String(first)
    }

    private func settings(file: String, users: [UserAccount]) throws(ConfigurationError) -> Loaded {
        var server = ServerConfiguration()
        server.users = users
        if let listen = try strings("listen") {
            var addresses: [ListenAddress] = []
            var tlsAddresses: [ListenAddress] = []
            for text in listen {
                if text.hasPrefix(Self.tlsScheme) {
                    tlsAddresses.append(try ListenAddress(parsing: String(text.dropFirst(Self.tlsScheme.count))))
                } else {
                    addresses.append(try ListenAddress(parsing: text))
                }
            }
            server.listen = addresses
            server.tlsListen = tlsAddresses
        }
        for (key, path) in [("tls_cert", \ServerConfiguration.tlsCertificate), ("tls_key", \.tlsKey),
                            ("tls_client_ca", \.tlsClientCA)] {
            if let value = try string(key), !value.isEmpty { server[keyPath: path] = try Self.credentialPath(value, key) }
        }
        if let path = try string("unix_socket") {
            server.unixSocket = path.isEmpty ? nil : path
        }
        if let mode = try string("unix_socket_mode") {
            guard let bits = UInt32(mode, radix: 8), bits <= 0o777 else {
                throw ConfigurationError(key: "unix_socket_mode", problem: "'\(mode)' is not octal permission bits such as 0660")
            }
            server.unixSocketMode = bits
        }
        server.numbers = try strings("numbers") ?? []
        server.maxLine = try int("max_line", default: server.maxLine)
        server.maxPayload = try int("max_payload", default: server.maxPayload)
        server.maxPending = try int("max_pending", default: server.maxPending)
        server.maxConnections = try int("max_connections", default: server.maxConnections)
        server.maxSubscriptions = try int("max_subscriptions", default: server.maxSubscriptions)
        server.maxNumbers = try int("max_numbers", default: server.maxNumbers)
        if let token = try string("auth_token"), !token.isEmpty { server.authToken = token }
        server.tcpKeepalive.idle = try int("tcp_keepalive_idle", default: server.tcpKeepalive.idle)
        server.tcpKeepalive.interval = try int("tcp_keepalive_interval", default: server.tcpKeepalive.interval)
        server.tcpKeepalive.count = try int("tcp_keepalive_count", default: server.tcpKeepalive.count)
        server.commandTimeout = try seconds("command_timeout", default: server.commandTimeout)
        server.authTimeout = try seconds("auth_timeout", default: server.authTimeout)
        server.authFailureDelay = try seconds("auth_failure_delay", default: server.authFailureDelay)
        server.sysInterval = try seconds("sys_interval", default: server.sysInterval)
        if let address = try string("metrics_listen"), !address.isEmpty {
            server.metricsListen = try ListenAddress(parsing: address, key: "metrics_listen")
        }
        server.metricsTopNumbers = try int("metrics_top_numbers", default: server.metricsTopNumbers)
        server.stateDirectory = try stateDirectory()
        if let text = try string("fsync") {
            guard let policy = FsyncPolicy(configurationValue: text) else {
                throw ConfigurationError(key: "fsync", problem: "'\(text)' is not turn or everysec")
            }
            server.fsync = policy
        }
        try server.validate()

        var level = Logger.Level.info
        if let text = try string("log_level") {
            guard let parsed = Logger.Level(rawValue: text.lowercased()) else {
                throw ConfigurationError(
                    key: "log_level",
                    problem: "'\(text)' is not one of trace, debug, info, notice, warning, error, critical"
                )
            }
            level = parsed
        }
        return Loaded(server: server, logLevel: level, file: file)
    }

    // MARK: Typed reads that name the key on failure

    private func int(_ key: String, default value: Int) throws(ConfigurationError) -> Int {
        try read(key, as: "a whole number") { try reader.requiredInt(forKey: ConfigKey(key)) } ?? value
    }

    /// A number of seconds, whole or not (`30`, `0.5`).
    private func seconds(_ key: String, default value: Double) throws(ConfigurationError) -> Double {
        try read(key, as: "a number of seconds") { try reader.requiredDouble(forKey: ConfigKey(key)) } ?? value
    }

    private func string(_ key: String) throws(ConfigurationError) -> String? {
        try read(key, as: "a string") { try reader.requiredString(forKey: ConfigKey(key)) }
    }

    private func strings(_ key: String) throws(ConfigurationError) -> [String]? {
        try read(key, as: "a list of strings") { try reader.requiredStringArray(forKey: ConfigKey(key)) }
    }

    /// Runs a required read; a missing key gives nil, any other failure an error naming the key.
    private func read<Value>(_ key: String, as kind: String, _ body: () throws -> Value) throws(ConfigurationError) -> Value? {
        do {
            return try body()
        } catch {
            if "\(error)".hasPrefix("Missing required config value") { return nil }
            if let text = reader.string(forKey: ConfigKey(key)) {
                throw ConfigurationError(key: key, problem: "must be \(kind), got '\(text)'")
            }
            throw ConfigurationError(key: key, problem: "must be \(kind) (\(error))")
        }
    }
}

/// The config document without the keys read by hand (`users:`, a list of mappings, which ``UsersConfig`` reads and
/// swift-configuration's YAML reader refuses; `cluster:`, which ``ClusterConfig`` reads), as a provider: the rest is
/// written back as YAML and read by that reader.
private struct DocumentProvider: ConfigProvider {
    private let document: YAMLSnapshot

    /// `document` without its `keys`, named `name` (the file) in swift-configuration's errors.
    init(_ document: Node.Mapping, without keys: Set<String>, name: String) throws {
        let rest = Node.Mapping(document.filter { !keys.contains($0.key.string ?? "") }.map { ($0.key, $0.value) })
        let text = try Yams.serialize(node: .mapping(rest), allowUnicode: true)
        let bytes = Array(text.utf8)
        self.document = try YAMLSnapshot(data: bytes.span.bytes, providerName: name, parsingOptions: .default)
    }

    var providerName: String { document.providerName }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        try document.value(forKey: key, type: type)
    }

    nonisolated(nonsending) func fetchValue(forKey key: AbsoluteConfigKey, type: ConfigType) async throws
        -> LookupResult
    {
        try document.value(forKey: key, type: type)
    }

    nonisolated(nonsending) func watchValue<Return: ~Copyable>(
        forKey key: AbsoluteConfigKey, type: ConfigType,
        updatesHandler: nonisolated(nonsending) (
            ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>
        ) async throws -> Return
    ) async throws -> Return {
        try await watchValueFromValue(forKey: key, type: type, updatesHandler: updatesHandler)
    }

    func snapshot() -> any ConfigSnapshot { document }

    nonisolated(nonsending) func watchSnapshot<Return: ~Copyable>(
        updatesHandler: nonisolated(nonsending) (ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws
            -> Return
    ) async throws -> Return {
        try await watchSnapshotFromSnapshot(updatesHandler: updatesHandler)
    }
}
