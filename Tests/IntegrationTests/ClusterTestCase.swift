import Foundation
import TestSupport
import XCTest

/// A test case with a cluster (docs/CLUSTER.md) of real processes: three `nats-server`s clustered with JetStream and
/// subd nodes on loopback, each with a `cluster:` block naming its own NATS server first. Every process is stopped
/// in the tear-down, also when the test fails.
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

    /// Three NATS servers and `count` subd nodes (`node1`, `node2`, ...), each node's bucket view caught up.
    func startCluster(nodes count: Int = 3) throws -> [Daemon] {
        natsServers = []
        let servers = try NATSServerProcess.startCluster(directory: directory) { natsServers.append($0) }
        var nodes: [Daemon] = []
        for index in 0..<count { nodes.append(try startDaemon(nodeConfig(index, servers))) }
        for node in nodes {
            // The bucket is made by the first node once JetStream has its leader (seconds after the servers start).
            try eventually("\(node.server) caught up with the numbers bucket", timeout: 30) {
                node.log.contains("numbers caught up")
            }
        }
        return nodes
    }

    /// The configuration of node `index + 1`: its own NATS server first, the others after it.
    func nodeConfig(_ index: Int, _ servers: [NATSServerProcess]) -> DaemonConfig {
        let urls = (0..<3).map { servers[(index + $0) % 3].address }.map { "\"nats://\($0)\"" }
        var config = DaemonConfig()
        config.extraLines = [
            "cluster:", "  servers: [\(urls.joined(separator: ", "))]", "  node: node\(index + 1)", "  ack: local",
        ]
        return config
    }
}
