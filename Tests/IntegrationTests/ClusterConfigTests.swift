import Foundation
import XCTest

/// The `cluster:` block of the config file, and a clustered node whose NATS cannot be reached (no NATS server needed:
/// the configured one is a port nobody listens on).
final class ClusterConfigTests: IntegrationTestCase {
    func testAnUnknownAckModeIsRefusedWithOneLineNamingIt() throws {
        let result = try runSubd(["cluster:", "  servers: [\"nats://127.0.0.1:4222\"]", "  node: a", "  ack: some"])
        XCTAssertEqual(result.status, 78)
        XCTAssertEqual(result.lines.count, 1, "one line, got: \(result.lines)")
        XCTAssertTrue(result.lines.first?.contains("cluster.ack: 'some' is not a mode") == true, "\(result.lines)")
    }

    func testBadClusterFieldsAreRefused() throws {
        let cases: [([String], String)] = [
            (
                ["cluster:", "  servers: [\"nats://127.0.0.1:4222\"]", "  node: a", "  nodes: b"],
                "cluster.nodes: unknown"
            ),
            (["cluster:", "  node: a"], "cluster.servers: must list"),
            (["cluster:", "  servers: [\"nats://127.0.0.1:4222\"]"], "cluster.node: must name"),
            (["cluster:", "  servers: [\"nats://127.0.0.1:4222\"]", "  node: \"a b\""], "cluster.node: 'a b'"),
            (["cluster:", "  servers: [\"nats://127.0.0.1:4222\"]", "  node: a", "  user: u"], "cluster.user"),
            (["cluster:", "  servers: [\"nats://:x\"]", "  node: a"], "cluster.servers: 'nats://:x'"),
            (
                ["cluster:", "  servers: [\"nats://127.0.0.1:4222\"]", "  node: a", "  ack_timeout: 0"],
                "cluster.ack_timeout"
            ),
            (
                ["cluster:", "  servers: [\"nats://127.0.0.1:4222\"]", "  node: a", "  ack_timeout: x"],
                "cluster.ack_timeout"
            ),
        ]
        for (lines, expected) in cases {
            let result = try runSubd(lines)
            XCTAssertEqual(result.status, 78, "\(lines)")
            XCTAssertTrue(result.lines.first?.contains(expected) == true, "\(expected): \(result.lines)")
        }
    }

    /// While NATS is unreachable, CREATE and REMOVE need the shared bucket and answer `-ERR LIMIT`, changing nothing;
    /// publish and subscribe go on locally with the numbers this node has.
    func testWithoutNATSCreateAndRemoveAreLimitAndLocalPublishingGoesOn() throws {
        let port = try TestAddress.freeLoopbackPort()
        var config = DaemonConfig(numbers: ["LOCAL"])
        config.extraLines = ["cluster:", "  servers: [\"nats://127.0.0.1:\(port)\"]", "  node: alone"]
        let daemon = try startDaemon(config)
        let client = try connect(daemon)
        assertError(try client.command("CREATE NEW"), "LIMIT", "no NATS")
        assertError(try client.command("REMOVE LOCAL"), "LIMIT", "no NATS")
        assertError(try client.command("CREATE KEPT retain"), "LIMIT", "no NATS: retained numbers are shared too")
        try subscribe(client, "LOCAL")
        XCTAssertEqual(try client.command("SEND LOCAL hello"), .ok("1"))
        XCTAssertEqual(try client.nextMessage(), Message("LOCAL", text: "hello"))
        XCTAssertEqual(try listCounts(client), ["LOCAL": 1])
    }

    private func runSubd(_ lines: [String]) throws -> (status: Int32?, lines: [String]) {
        let file = URL(fileURLWithPath: "/tmp/subd-it-cluster-\(UUID().uuidString.prefix(8)).yaml")
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let child = try ChildProcess(
            executable: try BinaryLocator.executable("subd"),
            arguments: ["--config", file.path, "--listen", "127.0.0.1:0"], environment: Daemon.environment(),
            label: "subd")
        defer { child.kill9IfRunning() }
        let status = child.waitForExit(timeout: 10)
        _ = child.stderr.waitForEnd(timeout: 5)
        return (status, child.stderr.text.split(separator: "\n").map(String.init))
    }
}
