// swift-tools-version: 6.1
import PackageDescription

/// No target carries `unsafeFlags`: SwiftPM refuses them in any package used through a version requirement, and every
/// library product here is meant to be used that way (docs/SWIFT.md). Release speed comes from the sources instead:
/// the center is `@inlinable` (so the server specializes it for its message type), and the stored properties that
/// every command or delivery touches skip the exclusivity checks in release builds only (`#if !DEBUG
/// @exclusivity(unchecked)`), each class stating the invariant (docs/ARCHITECTURE.md, Build settings and speed).
/// Debug builds, which `make test` runs, keep every check.
let package = Package(
    name: "subd",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "SubscriptionWire", targets: ["SubscriptionWire"]),
        .library(name: "SubscriptionCenter", targets: ["SubscriptionCenter"]),
        .library(name: "SubscriptionProtocol", targets: ["SubscriptionProtocol"]),
        .library(name: "SubscriptionCommands", targets: ["SubscriptionCommands"]),
        .library(name: "SubscriptionServer", targets: ["SubscriptionServer"]),
        .library(name: "SubscriptionClient", targets: ["SubscriptionClient"]),
        .library(name: "SubscriptionNATS", targets: ["SubscriptionNATS"]),
        .library(name: "SubscriptionNotifications", targets: ["SubscriptionNotifications"]),
        .library(name: "SubscriptionCluster", targets: ["SubscriptionCluster"]),
        .library(name: "SubscriptionWebSocket", targets: ["SubscriptionWebSocket"]),
        .library(name: "SubscriptionMQTT", targets: ["SubscriptionMQTT"]),
        .executable(name: "subd", targets: ["subd"]),
        .executable(name: "subctl", targets: ["subctl"]),
        .executable(name: "subbench", targets: ["subbench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: ["YAML"]),
        // Already under swift-configuration's YAML trait; subd parses the file once itself to check its keys.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // FilePath for the configuration file's provider (swift-configuration takes one).
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        // Deque for a session's replies in flight and the cluster's deadlines (already under swift-configuration).
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    ],
    targets: [
        // The wire's rules, written once: number and pattern names and their matching, client names, info pairs,
        // error codes, server addresses, the wire's size limits. No dependencies (no Foundation, no Glibc); the
        // center, the protocol codec, the server, the client and subctl import it.
        .target(name: "SubscriptionWire"),
        // The subscription service center: numbers, customers, the wildcard trie, fan-out. No sockets, no
        // Dispatch; the name rules come from SubscriptionWire.
        .target(name: "SubscriptionCenter", dependencies: ["SubscriptionWire"]),
        // The line protocol: byte-level command parser and reply/push encoder. No sockets, and no center: it
        // needs only the wire's rules.
        .target(name: "SubscriptionProtocol", dependencies: ["SubscriptionWire"]),
        // State that survives a restart: the created numbers and the retained values, in an append-only log with
        // checksummed records (docs/STATE.md), synced before the server acknowledges. Files only: no sockets,
        // no Dispatch; the info pairs' type comes from SubscriptionWire.
        .target(name: "SubscriptionState", dependencies: ["SubscriptionWire"]),
        // The command path without a socket: the client's state, the policy (deny by default, one row per verb), one
        // handler per verb as a function of the command, the client's state, the center and a `CommandEnvironment`
        // (the session's output, settings, saved state, `$SYS.`, counters, other nodes), and the dispatch. The server
        // conforms twice (a single node, a cluster node); the tests and the command-path fuzzer with their own.
        .target(
            name: "SubscriptionCommands",
            dependencies: ["SubscriptionCenter", "SubscriptionProtocol", "SubscriptionWire"]
        ),
        // Tiny C shim for system calls Swift cannot reach directly (accept4, IOV_MAX).
        .target(name: "CSubdShim"),
        // The one system-call wrapper of the server and the client: EINTR retried, EAGAIN as "would block",
        // errors that carry errno and the operation. (subbench keeps its own on purpose: it measures, not serves.)
        .target(name: "SubscriptionSystem", dependencies: ["CSubdShim"]),
        // libsystemd's sd-daemon API (readiness, watchdog, socket activation), for subd only.
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),
        // OpenSSL from Debian: libcrypto for the users' salted secret hashes (PBKDF2, random salts, constant-time
        // compares), libssl for TLS listeners.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        // The server side of WebSocket (RFC 6455) as plain values: an incremental frame decoder (masking, fragments,
        // control frames, UTF-8 of text messages, close codes, size limits), the server's frame encoder and the
        // HTTP/1.1 upgrade's checks and answers. No sockets, no Foundation; the frame code needs only the wire's
        // read buffer, the handshake OpenSSL's SHA-1 and Base64 (Sec-WebSocket-Accept).
        .target(name: "SubscriptionWebSocket", dependencies: ["SubscriptionWire", "COpenSSL"]),
        // MQTT 3.1.1 and 5.0 as plain values (docs/PROTOCOL.md, "MQTT"): the control packets, an incremental decoder
        // (every malformed packet refused with its reason code), the encoder, and the one-to-one map between MQTT
        // topics and filters and subd's numbers and patterns. No sockets, no Foundation: the wire's rules and its
        // read buffer only.
        .target(name: "SubscriptionMQTT", dependencies: ["SubscriptionWire"]),
        // The web console's files (clients/js, clients/console) built into the binary by the EmbedWebConsole plugin,
        // which runs embed-web-files (docs/ARCHITECTURE.md, "The web console").
        .executableTarget(name: "embed-web-files"),
        .plugin(name: "EmbedWebConsole", capability: .buildTool(), dependencies: ["embed-web-files"]),
        .target(name: "SubscriptionWebConsole", plugins: ["EmbedWebConsole"]),
        // The daemon engine: BSD sockets + Dispatch around the center.
        .target(
            name: "SubscriptionServer",
            dependencies: [
                "SubscriptionCenter", "SubscriptionCommands", "SubscriptionProtocol", "SubscriptionState",
                "SubscriptionWire", "SubscriptionSystem", "SubscriptionWebSocket", "SubscriptionWebConsole",
                "SubscriptionMQTT", "CSubdShim", "COpenSSL",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        // A Swift client for the protocol (async/await), checking what it sends with the wire's rules.
        .target(name: "SubscriptionClient", dependencies: ["SubscriptionWire", "SubscriptionSystem", "COpenSSL"]),
        // A NATS client for the cluster bridge (docs/CLUSTER.md): the client protocol's byte-level parser and encoder
        // and a connection state machine (pure, socket-free), a client on a serial DispatchQueue it is given (the
        // server's loop queue) over SubscriptionSystem's sockets, and JetStream key-value buckets. JSON (INFO, CONNECT,
        // the JetStream API) with Foundation's JSONDecoder and JSONEncoder, from FoundationEssentials.
        .target(
            name: "SubscriptionNATS",
            dependencies: ["SubscriptionSystem", "SubscriptionWire", .product(name: "Logging", package: "swift-log")]
        ),
        // NSNotificationCenter for Swift concurrency, in process: `NotificationHub`, a Sendable hub that owns one
        // center behind a lock (streams, closure observers with tokens, weak observers, retained numbers, watches).
        // No sockets; Dispatch only for the queue an observer may choose. The wire's rules (names, info pairs) apply,
        // so what is posted here could travel to subd unchanged.
        .target(name: "SubscriptionNotifications", dependencies: ["SubscriptionCenter", "SubscriptionWire"]),
        // The seed's shopping cart, rebuilt on NotificationHub (`swift run shopping-cart`);
        // SubscriptionNotificationsTests runs it and checks its output.
        .executableTarget(
            name: "shopping-cart", dependencies: ["SubscriptionNotifications"], path: "Examples/ShoppingCart"
        ),
        // The network cart of docs/SWIFT.md, the same cart on a running subd with ReconnectingClient
        // (`swift run network-cart [HOST:PORT...]`); ReconnectingClientTests runs it and checks its output.
        .executableTarget(
            name: "network-cart", dependencies: ["SubscriptionClient", "SubscriptionWire"], path: "Examples/NetworkCart"
        ),
        // The cluster bridge (docs/CLUSTER.md): joins subd nodes through NATS with SubscriptionNATS. Its own target,
        // above the server: the server defines the seam (`ClusterLink`, and the `package` methods that apply what other
        // nodes did) and knows nothing of NATS; the bridge implements the seam; only subd, which wires them together
        // when `cluster:` is configured, depends on both. A node without `cluster:` never makes a bridge.
        .target(
            name: "SubscriptionCluster",
            dependencies: [
                "SubscriptionServer", "SubscriptionNATS", "SubscriptionProtocol", "SubscriptionWire",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),
        .executableTarget(
            name: "subd",
            dependencies: [
                "SubscriptionServer", "SubscriptionCluster", "SubscriptionNATS", "SubscriptionState",
                "SubscriptionSystem", "SubscriptionWire", "CSystemd",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .executableTarget(
            name: "subctl",
            dependencies: [
                "SubscriptionClient", "SubscriptionSystem", "SubscriptionWire",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Load generator for `make bench`; OpenSSL for `--tls` (its own minimal blocking client, not the library's).
        .executableTarget(name: "subbench", dependencies: ["CSubdShim", "COpenSSL"]),
        // Helpers shared by the test targets: a seeded random generator, and real nats-server processes (for the NATS
        // client's tests and the cluster bridge's integration tests).
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "SubscriptionWireTests", dependencies: ["SubscriptionWire", "TestSupport"]),
        .testTarget(name: "SubscriptionSystemTests", dependencies: ["SubscriptionSystem"]),
        .testTarget(
            name: "SubscriptionStateTests", dependencies: ["SubscriptionState", "SubscriptionWire", "TestSupport"]
        ),
        .testTarget(
            name: "SubscriptionCenterTests", dependencies: ["SubscriptionCenter", "SubscriptionWire", "TestSupport"]
        ),
        .testTarget(
            name: "SubscriptionProtocolTests",
            dependencies: ["SubscriptionProtocol", "SubscriptionWire", "TestSupport"]
        ),
        // The WebSocket codec: RFC 6455's examples, every refusal with its close code or HTTP status, each decoder
        // test fed whole, a byte at a time and in seeded random chunks.
        .testTarget(name: "SubscriptionWebSocketTests", dependencies: ["SubscriptionWebSocket", "TestSupport"]),
        // The MQTT codec and topic map: every packet of both versions encoded and decoded back, every malformed
        // packet refused with its reason code, each decoder test fed whole, a byte at a time and in seeded random
        // chunks.
        .testTarget(
            name: "SubscriptionMQTTTests", dependencies: ["SubscriptionMQTT", "SubscriptionWire", "TestSupport"]
        ),
        .testTarget(
            name: "SubscriptionClientTests",
            dependencies: ["SubscriptionClient", "SubscriptionWire", "SubscriptionSystem", "TestSupport"]
        ),
        // NotificationHub: every entry point, a many-task stress test (`make tsan` runs it under the thread sanitizer),
        // and the shopping-cart example's output (the built executable is run).
        .testTarget(
            name: "SubscriptionNotificationsTests", dependencies: ["SubscriptionNotifications", "SubscriptionWire"]
        ),
        // Every handler and the policy, with a real center and an environment that records what they asked of it.
        .testTarget(
            name: "SubscriptionCommandsTests",
            dependencies: ["SubscriptionCommands", "SubscriptionCenter", "SubscriptionProtocol", "SubscriptionWire"]
        ),
        // The engine's pure parts (the connection state machine, output accounting, liveness), without sockets
        // where they need none.
        .testTarget(
            name: "SubscriptionServerTests",
            dependencies: [
                "SubscriptionServer", "SubscriptionCenter", "SubscriptionProtocol", "SubscriptionWire", "TestSupport",
                "SubscriptionWebSocket", "SubscriptionWebConsole",
            ]
        ),
        // The NATS client: parser, encoder and state machine as plain values, and the client against real nats-server
        // processes (started per test on free loopback ports; `make deps-test` installs Debian's nats-server).
        .testTarget(
            name: "SubscriptionNATSTests",
            dependencies: [
                "SubscriptionNATS", "SubscriptionSystem", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The cluster bridge's plain values (upstream interest, the per-origin dedupe, subjects and headers); the
        // bridge
        // itself is tested with real processes in IntegrationTests (ClusterBridgeTests).
        .testTarget(
            name: "SubscriptionClusterTests",
            dependencies: ["SubscriptionCluster", "SubscriptionNATS", "SubscriptionWire"]
        ),
        // Real subd and subctl processes over real sockets. Speaks the wire protocol as any outside client would;
        // only ReconnectingClientTests imports the client library, to test its reconnecting against subd processes that
        // are killed and started again. The dependency also makes `swift test` build the binaries first.
        // AllocationBudget.txt, websocket-client.py, mqtt_client.py and mqtt_interop.py are read from the source tree
        // (next to the tests), not bundled.
        .testTarget(
            name: "IntegrationTests", dependencies: ["SubscriptionClient", "SubscriptionWire", "TestSupport"],
            exclude: ["AllocationBudget.txt", "websocket-client.py", "mqtt_client.py", "mqtt_interop.py"]
        ),
    ]
)
