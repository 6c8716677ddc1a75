import Foundation
import TestSupport
import XCTest

/// The harness of the cluster tests (`ClusterBridgeTests`, `ClusterAckTests`, `ClusterQueueTests`,
/// `ClusterRetainedTests`): three `nats-server`s clustered with JetStream and subd nodes on loopback, each with a
/// `cluster:` block naming its own NATS server first. Every process is stopped in the tear-down, also when the test
/// fails.
class ClusterTestCase: IntegrationTestCase {
    var natsServers: [NATSServerProcess] = []
    var directory = ""

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard NATSServerProcess.binary() != nil else { throw XCTSkip(NATSServerProcess.notInstalled) }
        directory = NSTemporaryDirectory() + "subd-cluster-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        super.tearDown()  // the subd nodes first (each must exit 0 on SIGTERM)
        for server in natsServers { server.kill() }
        natsServers = []
        if !directory.isEmpty { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// `IntegrationTestCase.eventually` with a longer default deadline (20 s instead of 5): what the cluster tests
    /// wait for comes after NATS round trips (routes, buckets, other nodes), which on a loaded machine (CI: two cores,
    /// the suite in parallel, under ThreadSanitizer) can take seconds. Only the deadline: a condition that never holds
    /// still fails, later.
    override func eventually(
        _ what: String, timeout: TimeInterval = 20, file: StaticString = #filePath, line: UInt = #line,
        _ condition: () throws -> Bool
    ) throws {
        try super.eventually(what, timeout: timeout, file: file, line: line, condition)
    }

    /// Three NATS servers and `count` subd nodes (`node1`, `node2`, ...), each node's bucket view caught up;
    /// `prepare` runs once the servers' JetStream is up, before the first node starts.
    func startCluster(
        nodes count: Int = 3, logLevel: String = "info", ack: (Int) -> [String] = { _ in ["  ack: local"] },
        prepare: ([NATSServerProcess]) throws -> Void = { _ in }
    ) throws -> [Daemon] {
        natsServers = []
        let servers = try NATSServerProcess.startCluster(directory: directory) { natsServers.append($0) }
        try prepare(servers)
        var nodes: [Daemon] = []
        for index in 0..<count {
            var config = nodeConfig(index, servers, ack: ack(index))
            config.logLevel = logLevel
            nodes.append(try startDaemon(config))
        }
        for node in nodes {
            try waitForCatchUp(node)
        }
        return nodes
    }

    /// Waits until `node` has loaded both buckets (numbers and retained values): it answers `GET` and `SUB` of a
    /// retained number from then on.
    func waitForCatchUp(_ node: Daemon) throws {
        // The buckets are made by the first node once JetStream has its leader (seconds after the servers start).
        try eventually("\(node.server) caught up with the buckets", timeout: 30) {
            node.log.contains("numbers caught up") && node.log.contains("retained values caught up")
        }
    }

    /// `GET` of `number`: the pushed value as `rev payload`, and the reply.
    func get(_ client: LineClient, _ number: String) throws -> (String?, Reply) {
        let reply = try client.command("GET \(number)")
        let value = client.takePushes().compactMap(\.message).last.map {
            "\($0.attributes["rev"] ?? "none") \($0.text)"
        }
        return (value, reply)
    }

    /// The configuration of node `index + 1`: its own NATS server first, the others after it; `ack` (lines of the
    /// `cluster:` block) is `ack: local` unless given.
    func nodeConfig(_ index: Int, _ servers: [NATSServerProcess], ack: [String] = ["  ack: local"]) -> DaemonConfig {
        let urls = (0..<3).map { servers[(index + $0) % 3].address }.map { "\"nats://\($0)\"" }
        var config = DaemonConfig()
        config.extraLines =
            [
                "cluster:", "  servers: [\(urls.joined(separator: ", "))]", "  node: node\(index + 1)",
            ] + ack
        return config
    }

    /// True once `server` (a node's own NATS server) has `count` routes that brought a subscription to `subject`
    /// (`/routez?subs=1`): the other nodes' interest has propagated to it.
    func knows(_ server: NATSServerProcess, _ subject: String, count: Int) throws -> Bool {
        let routes = try server.monitoring("/routez?subs=1")["routes"] as? [[String: Any]] ?? []
        return routes.filter { ($0["subscriptions_list"] as? [String] ?? []).contains(subject) }.count >= count
    }

    /// True once `server` has, from `count` routes, a queue subscription to `subject` in `queue`
    /// (`/routez?subs=detail`): the other nodes' members reached it.
    func knowsQueue(_ server: NATSServerProcess, _ subject: String, _ queue: String, count: Int) throws -> Bool {
        let routes = try server.monitoring("/routez?subs=detail")["routes"] as? [[String: Any]] ?? []
        return routes.filter { route in
            (route["subscriptions_list_detail"] as? [[String: Any]] ?? []).contains {
                $0["subject"] as? String == subject && $0["qgroup"] as? String == queue
            }
        }.count >= count
    }

    /// The subjects node `name` subscribes to upstream, on whichever server it is connected to.
    func upstream(of node: String) throws -> [String] {
        for server in natsServers where server.process.isRunning {
            if let subjects = try server.subscriptions(ofConnectionNamed: "subd \(node)") {
                return subjects.filter { $0.hasPrefix("subd.m.") }
            }
        }
        return []
    }

    /// The queue subscriptions node `name` holds upstream, as `subject queue`, sorted.
    func queueSubscriptions(of node: String) throws -> [String] {
        try subscriptionDetails(of: node).compactMap { entry in entry.queue.map { "\(entry.subject) \($0)" } }.sorted()
    }

    /// The subjects node `name` subscribes to upstream outside queue groups, sorted.
    func plainSubscriptions(of node: String) throws -> [String] {
        try subscriptionDetails(of: node).filter { $0.queue == nil }.map(\.subject).sorted()
    }

    /// Node `name`'s upstream subscriptions to `subd.m.` subjects, with their queue, on whichever server it is
    /// connected to (`/connz?subs=detail`).
    private func subscriptionDetails(of node: String) throws -> [(subject: String, queue: String?)] {
        for server in natsServers where server.process.isRunning {
            let connections = try server.monitoring("/connz?subs=detail")["connections"] as? [[String: Any]] ?? []
            guard let connection = connections.first(where: { $0["name"] as? String == "subd \(node)" }) else {
                continue
            }
            let details = connection["subscriptions_list_detail"] as? [[String: Any]] ?? []
            return details.compactMap { detail in
                guard let subject = detail["subject"] as? String, subject.hasPrefix("subd.m.") else { return nil }
                let queue = (detail["qgroup"] as? String).flatMap { $0.isEmpty ? nil : $0 }
                return (subject, queue)
            }
        }
        return []
    }
}
