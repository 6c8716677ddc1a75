import Logging
import SubscriptionCluster
import SubscriptionServer

#if canImport(Glibc)
    import Glibc
#endif

// subd: the subscription service center as a daemon. See README.md and `subd --help`.

/// Writes a message to stderr unbuffered (the C `stderr` global is not concurrency-safe to name in Swift 6).
func writeToStandardError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}

// A verb that is not the daemon, run before any signal is caught (a SIGTERM ends it as it would any command).
if CommandLine.arguments.dropFirst().first == "hash-secret" {
    exit(HashSecretCommand.run(Array(CommandLine.arguments.dropFirst(2))))
}

// Caught from the first instruction on: a SIGTERM while the config loads still ends in a clean exit, and a SIGHUP
// waits for the start to finish, then reloads.
let signals = SignalPipe(signals: [SIGTERM, SIGINT, SIGHUP])

let arguments: DaemonArguments
do {
    arguments = try DaemonArguments(parsing: Array(CommandLine.arguments.dropFirst()))
} catch {
    writeToStandardError("subd: \(error.message)\n\n\(DaemonArguments.usage)\n")
    exit(64)
}
if arguments.wantsHelp {
    print(DaemonArguments.usage)
    exit(0)
}
if arguments.wantsConfigKeys {
    for key in ConfigLoader.allKeys { print(key.listing) }
    exit(0)
}
if arguments.wantsVersion {
    print("subd \(SubdVersion.current)")
    exit(0)
}

let loaded: ConfigLoader.Loaded
do {
    loaded = try await ConfigLoader.load(arguments)
} catch {
    writeToStandardError("subd: bad configuration: \(error)\n")
    exit(78)  // EX_CONFIG
}

let logLevel = LogLevelSwitch(loaded.logLevel)
let journal = LogLineHandler.standardErrorIsJournal()
LoggingSystem.bootstrap { _ in LogLineHandler(levelSwitch: logLevel, journal: journal) }
let logger = Logger(label: "subd")

let descriptors = DescriptorLimit.raise()
if descriptors > 0 && descriptors < UInt64(loaded.server.maxConnections) + 64 {
    logger.warning(
        """
        the open-file limit (\(descriptors)) is below max_connections + 64: connections past it wait in the \
        backlog; raise it (ulimit -n, or LimitNOFILE= under systemd)
        """)
}

do {
    let inherited = try SocketActivation.inheritedSockets()
    let server = Server(configuration: loaded.server, logger: logger)
    // With `cluster:` only: the bridge to the other nodes (docs/CLUSTER.md), started once the server serves.
    let bridge = loaded.cluster.map { ClusterBridge(server: server, settings: $0, logger: logger) }
    server.cluster = bridge
    let daemon = Daemon(
        server: server, logger: logger, signals: signals, arguments: arguments, logLevel: logLevel,
        inherited: inherited, cluster: bridge
    )
    try await daemon.run()
    exit(0)
} catch {
    logger.critical("cannot start: \(error)")
    exit(1)
}
