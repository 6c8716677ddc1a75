import Foundation
import TestSupport
import XCTest

/// A node answers no retained value before it caught up (docs/CLUSTER.md, "Caught up"): until its watches have read
/// both buckets, `GET` and `SUB` of a retained number answer `-ERR LIMIT` (never "no value", never an old one), and
/// a number it does not know is `NOTFOUND` only once the numbers bucket was read.
final class ClusterCatchUpTests: ClusterTestCase {
    func testANodeThatCannotReadTheBucketsYetRefusesThenAnswersTheLatestValue() throws {
        let nodes = try startCluster(nodes: 1)
        let publisher = try connect(nodes[0], "publisher on node1")
        XCTAssertEqual(try publisher.command("CREATE TEMP retain"), .ok("created"))
        XCTAssertEqual(try publisher.command("SEND TEMP t1"), .ok("0"))
        XCTAssertEqual(try publisher.command("SEND TEMP t2"), .ok("0"))

        // node2 knows only the third NATS server, stopped (SIGSTOP): it serves its sessions but cannot read a bucket.
        let stopped = natsServers[2]
        ChildProcess.stop(pid: stopped.process.processIdentifier)
        var config = DaemonConfig()
        config.extraLines = [
            "cluster:", "  servers: [\"nats://\(stopped.address)\"]", "  node: node2", "  ack: local",
        ]
        let late = try startDaemon(config)
        let client = try connect(late, "client on node2")
        for attempt in 1...3 {
            let (value, reply) = try get(client, "TEMP")
            assertError(reply, "LIMIT", "GET \(attempt) before the buckets are read")
            XCTAssertNil(value, "no value pushed")
            assertError(try client.command("SUB TEMP"), "LIMIT", "SUB \(attempt) before the buckets are read")
            XCTAssertEqual(client.takePushes(), [], "nothing pushed")
        }
        XCTAssertFalse(late.log.contains("caught up"), "the NATS server was stopped all along")

        // Once the server runs again, the node reads both buckets: the latest value and revision.
        kill(stopped.process.processIdentifier, SIGCONT)
        try waitForCatchUp(late)
        let (value, reply) = try get(client, "TEMP")
        XCTAssertEqual(value, "2 t2")
        XCTAssertEqual(reply, .ok("2"))
        XCTAssertEqual(try client.command("SUB TEMP"), .ok())
        XCTAssertEqual(
            client.takePushes().compactMap(\.message).map { "\($0.attributes["rev"] ?? "") \($0.text)" },
            ["2 t2"])
        assertError(try client.command("GET NONE"), "NOTFOUND", "the numbers bucket was read")
    }
}
