import Configuration
import Foundation
import Logging
import SubscriptionCluster
import SubscriptionServer
import SubscriptionState
import SystemPackage
import Yams

/// Reads subd's settings with swift-configuration: command line, then `SUBD_*` environment variables, then the
/// YAML file, then the built-in defaults. Which keys there are, their defaults and how each is read is the one table
/// ``settings`` (ConfigKeys.swift), which config/subd.yaml documents and `subd --print-config-keys` prints; `users:`
/// and `cluster:` are read from the file only, by hand (``UsersConfig``, ``ClusterConfig``).
struct ConfigLoader {
    /// The settings subd runs with.
    struct Loaded {
        /// What the server engine needs.
        var server: ServerConfiguration
        /// The log level.
        var logLevel: Logger.Level
        /// The file looked for: `--config`, else ``defaultFile`` (read only if it exists).
        var file: String?
        /// The `cluster:` block (``ClusterConfig``); nil on a single node.
        var cluster: ClusterSettings?
    }

    /// The file read when `--config` is not given (only if it exists).
    static let defaultFile = "/etc/subd/subd.yaml"

    private let reader: ConfigReader
    /// The file's YAML mapping, for the keys read by hand (``Setting/fromDocumentOnly``); nil without one.
    let document: Node.Mapping?

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
                throw ConfigurationError(
                    key: "--config", problem: "cannot read '\(file)': \(error.localizedDescription)")
            }
            text = nil
        }
        // A document of comments only (every key left at its default) has nothing for the file provider to read.
        let document = try text.flatMap { text throws(ConfigurationError) in try Self.checkedDocument(of: text) }
        if let document {
            let byHand = Set(settings.filter(\.fromDocumentOnly).map(\.info.name))
            do {
                if document.keys.allSatisfy({ !byHand.contains($0.string ?? "") }) {
                    providers.append(try await FileProvider<YAMLSnapshot>(filePath: FilePath(file)))
                } else {
                    providers.append(try DocumentProvider(document, without: byHand, name: file))
                }
            } catch {
                throw ConfigurationError(key: "--config", problem: "cannot read '\(file)': \(error)")
            }
        }
        return try ConfigLoader(reader: ConfigReader(providers: providers), document: document).loaded(file: file)
    }

    /// Every top-level key subd reads, as written in the YAML file (``settings``).
    static let knownKeys: Set<String> = Set(settings.map(\.info.name))

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
    func stateDirectory() throws(ConfigurationError) -> String? {
        if let path = try string("state_dir") { return path.isEmpty ? nil : path }
        guard let value = getenv("STATE_DIRECTORY").map({ String(cString: $0) }),
            let first = value.split(separator: ":").first
        else { return nil }
        return String(first)
    }

    /// Reads every key of ``settings`` over ``defaults``, then checks the whole.
    private func loaded(file: String) throws(ConfigurationError) -> Loaded {
        var loaded = Self.defaults
        loaded.file = file
        for setting in Self.settings { try setting.read(self, &loaded) }
        try loaded.server.validate()
        return loaded
    }

    // MARK: Typed reads that name the key on failure

    func int(_ key: String, default value: Int) throws(ConfigurationError) -> Int {
        try read(key, as: "a whole number") { try reader.requiredInt(forKey: ConfigKey(key)) } ?? value
    }

    /// A number of seconds, whole or not (`30`, `0.5`).
    func seconds(_ key: String, default value: Double) throws(ConfigurationError) -> Double {
        try read(key, as: "a number of seconds") { try reader.requiredDouble(forKey: ConfigKey(key)) } ?? value
    }

    func bool(_ key: String, default value: Bool) throws(ConfigurationError) -> Bool {
        try read(key, as: "true or false") { try reader.requiredBool(forKey: ConfigKey(key)) } ?? value
    }

    func string(_ key: String) throws(ConfigurationError) -> String? {
        try read(key, as: "a string") { try reader.requiredString(forKey: ConfigKey(key)) }
    }

    func strings(_ key: String) throws(ConfigurationError) -> [String]? {
        try read(key, as: "a list of strings") { try reader.requiredStringArray(forKey: ConfigKey(key)) }
    }

    /// Runs a required read; a missing key gives nil, any other failure an error naming the key.
    private func read<Value>(
        _ key: String, as kind: String, _ body: () throws -> Value
    ) throws(ConfigurationError) -> Value? {
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
        updatesHandler:
            nonisolated(nonsending) (
                ConfigUpdatesAsyncSequence<Result<LookupResult, any Error>, Never>
            ) async throws -> Return
    ) async throws -> Return {
        try await watchValueFromValue(forKey: key, type: type, updatesHandler: updatesHandler)
    }

    func snapshot() -> any ConfigSnapshot { document }

    nonisolated(nonsending) func watchSnapshot<Return: ~Copyable>(
        updatesHandler:
            nonisolated(nonsending) (ConfigUpdatesAsyncSequence<any ConfigSnapshot, Never>) async throws
            -> Return
    ) async throws -> Return {
        try await watchSnapshotFromSnapshot(updatesHandler: updatesHandler)
    }
}
