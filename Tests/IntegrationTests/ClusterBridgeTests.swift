import Foundation
import TestSupport
import XCTest

/// The cluster bridge (docs/CLUSTER.md) with real processes: three `nats-server`s clustered with JetStream and three
/// subd nodes on loopback, each with a `cluster:` block naming its own NATS server first (``ClusterTestCase``).
final class ClusterBridgeTests: ClusterTestCase {
    func testNumbersPublicationsInterestAndRemovalCrossNodes() throws {
        let nodes = try startCluster()
        let publisher = try connect(nodes[0], "publisher on node1")
        let exact2 = try connect(nodes[1], "exact subscriber on node2")
        let overlapping3 = try connect(nodes[2], "overlapping subscriber on node3")
        let filtered3 = try connect(nodes[2], "filtered subscriber on node3")

        // CREATE: the bucket decides, whichever node asks.
        XCTAssertEqual(try publisher.command("CREATE SCIENCE.physics"), .ok("created"))
        XCTAssertEqual(try exact2.command("CREATE SCIENCE.physics"), .ok("exists"), "created on node1")

        // SUB on nodes 2 and 3 (node 3 knows the number from its watch, or asks the bucket when the watch is not there
        // yet); one session on node 3 holds three overlapping patterns.
        try subscribe(overlapping3, "SCIENCE.physics", "SCIENCE.>", ">")
        try subscribe(exact2, "SCIENCE.physics")
        let system3 = try connect(nodes[2], "$SYS subscriber on node3")
        try subscribe(system3, "$SYS.>")
        XCTAssertEqual(try filtered3.command("SUB SCIENCE.> from=someone-else"), .ok())
        try eventually("node3 holds one upstream subscription per distinct pattern") {
            try upstream(of: "node3").sorted() == ["subd.m.>", "subd.m.SCIENCE.>", "subd.m.SCIENCE.physics"]
        }
        try eventually("node1's NATS server knows the interest of nodes 2 and 3") {
            try knows(natsServers[0], "subd.m.SCIENCE.physics", count: 2)
                && knows(natsServers[0], "subd.m.>", count: 1)
        }

        XCTAssertEqual(try publisher.command("HELLO name=lab").errorCode, nil)
        for payload in ["V1.0", "V2.0"] {
            try publisher.send("PUB SCIENCE.physics 4 unit=EUR price=12\n\(payload)\n")
            XCTAssertEqual(try publisher.readReply(), .ok("0"), "ack: local counts this node's receivers only")
        }
        for subscriber in [exact2, overlapping3] {
            for payload in ["V1.0", "V2.0"] {
                let message = try subscriber.nextMessage()
                XCTAssertEqual(message.number, "SCIENCE.physics")
                XCTAssertEqual(message.payload, Array(payload.utf8), "each publication once, in order")
                XCTAssertEqual(message.attributes, ["from": "lab", "unit": "EUR", "price": "12"])
            }
            XCTAssertEqual(try subscriber.pushesBeforePing(), [], "\(subscriber.label): no second copy")
        }
        XCTAssertEqual(try filtered3.pushesBeforePing(), [], "from= filters apply to remote publications")
        XCTAssertFalse(try upstream(of: "node3").contains { $0.hasPrefix("subd.m.$SYS") }, "$SYS. is never bridged")

        // A number created on one node and published to at once on another.
        XCTAssertEqual(try publisher.command("CREATE NEWS"), .ok("created"))
        XCTAssertEqual(try exact2.command("SEND NEWS first"), .ok("0"), "known by the watch or from the bucket")
        XCTAssertEqual(try overlapping3.nextMessage(), Message("NEWS", text: "first"), "through its > subscription")

        // UNSUB: the last holder of a pattern ends its upstream subscription; others stay.
        XCTAssertEqual(try overlapping3.command("UNSUB >"), .ok())
        XCTAssertEqual(try overlapping3.command("UNSUB SCIENCE.>"), .ok())
        try eventually("node3 holds SCIENCE.> (filtered3) and SCIENCE.physics upstream, no longer >") {
            try upstream(of: "node3").sorted() == ["subd.m.SCIENCE.>", "subd.m.SCIENCE.physics"]
        }
        filtered3.close()
        try eventually("a session that ends gives up its patterns upstream") {
            try upstream(of: "node3") == ["subd.m.SCIENCE.physics"]
        }

        // REMOVE on node 2: node 3's exact subscriber is told GONE, and its upstream interest goes with it.
        XCTAssertEqual(try exact2.command("REMOVE SCIENCE.physics"), .ok("removed 1"))
        XCTAssertEqual(try overlapping3.nextPush(), .gone("SCIENCE.physics"))
        try eventually("the removal reached node1") { try listCounts(publisher)["SCIENCE.physics"] == nil }
        try eventually("node3's upstream interest went with the number") { try upstream(of: "node3").isEmpty }
        assertError(try publisher.command("SEND SCIENCE.physics late"), "NOTFOUND", "removed everywhere")
    }

    /// A node whose NATS server dies moves to another server: its upstream subscriptions are sent again, so it
    /// receives the other nodes' publications, and once the buckets have their quorum again (2 of 3) its `CREATE`s
    /// work. Meanwhile its own sessions were served all along.
    /// A subd node killed (SIGKILL) in the middle of a stream: its sessions are gone with it, NATS drops its upstream
    /// interest as its connection closes, and the other nodes go on: every message published on node1 after the kill
    /// reaches node2's subscriber once, in order. What the design promises (docs/CLUSTER.md, failure cases): a node's
    /// sessions live and die with it; the rest of the cluster does not notice beyond the interest it loses.
    func testASubdNodeKilledMidStreamLeavesTheOthersServed() throws {
        let nodes = try startCluster(nodes: 2)
        let doomed = try Daemon(config: nodeConfig(2, natsServers))
        defer { _ = doomed.stop(signal: SIGKILL) }
        try eventually("node3 caught up with the numbers bucket", timeout: 30) {
            doomed.log.contains("numbers caught up")
        }
        let publisher = try connect(nodes[0], "publisher on node1")
        let survivor = try connect(nodes[1], "subscriber on node2")
        let victim = try LineClient.connect(port: doomed.port, label: "subscriber on node3")
        defer { victim.close() }
        XCTAssertEqual(try publisher.command("CREATE STREAM"), .ok("created"))
        try subscribe(survivor, "STREAM")
        XCTAssertEqual(try victim.command("SUB STREAM"), .ok())
        try eventually("node2's and node3's interest reached node1's NATS server") {
            try knows(natsServers[0], "subd.m.STREAM", count: 2)
        }
        for index in 0..<50 { XCTAssertEqual(try publisher.command("SEND STREAM m\(index)"), .ok("0")) }
        for index in 0..<50 {
            XCTAssertEqual(try survivor.nextMessage(), Message("STREAM", text: "m\(index)"))
            XCTAssertEqual(try victim.nextMessage(), Message("STREAM", text: "m\(index)"))
        }

        _ = doomed.stop(signal: SIGKILL)
        try eventually("NATS dropped node3's interest as its connection closed") {
            try upstream(of: "node3").isEmpty
        }
        for index in 50..<150 { XCTAssertEqual(try publisher.command("SEND STREAM m\(index)"), .ok("0")) }
        for index in 50..<150 {
            XCTAssertEqual(try survivor.nextMessage(), Message("STREAM", text: "m\(index)"), "in order, once each")
        }
        XCTAssertEqual(try survivor.pushesBeforePing(), [], "nothing twice")
        XCTAssertEqual(try publisher.command("CREATE AFTER.KILL"), .ok("created"), "the bucket has its quorum")
    }

    func testANodeWhoseNATSServerDiesMovesToAnotherAndGoesOn() throws {
        let nodes = try startCluster(nodes: 2)
        let publisher = try connect(nodes[0], "publisher on node1")
        let subscriber = try connect(nodes[1], "subscriber on node2")
        XCTAssertEqual(try publisher.command("CREATE N"), .ok("created"))
        try subscribe(subscriber, "N")
        try eventually("node2's interest reached node1's NATS server") {
            try knows(natsServers[0], "subd.m.N", count: 1)
        }

        natsServers[1].kill()  // node2's own server
        XCTAssertEqual(try subscriber.command("SEND N local"), .ok("1"), "local delivery goes on without NATS")
        XCTAssertEqual(try subscriber.nextMessage(), Message("N", text: "local"))
        try eventually("node2 reconnected to another server", timeout: 30) {
            nodes[1].log.components(separatedBy: "cluster: connected to NATS").count > 2
        }
        try eventually("node2's interest, sent again, reached node1's NATS server") {
            try upstream(of: "node2") == ["subd.m.N"]
        }
        // The interest may reach node1's server over a route a moment after node2's server has it.
        try eventually("a publication on node1 reaches node2 again") {
            XCTAssertEqual(try publisher.command("SEND N remote"), .ok("0"))
            let pushes = try subscriber.pushesBeforePing()
            return pushes.contains(.message(Message("N", text: "remote")))
        }
        try eventually("CREATE works once the bucket has its quorum again") {
            // An attempt that timed out may have been stored: then the next one finds it.
            let reply = try subscriber.command("CREATE AFTER")
            return reply == .ok("created") || reply == .ok("exists")
        }
    }

    /// `cluster.user`/`cluster.password` reach NATS: with them the node joins (a single JetStream server with
    /// authorization, the bucket R1 by `replicas: 1`); with a wrong password it never does, and `CREATE` is
    /// `-ERR LIMIT` while its own sessions are served.
    func testCredentialsFromTheClusterBlockAreUsedAndAWrongOneKeepsTheNodeLocal() throws {
        let server = try NATSServerProcess(
            .init(monitoring: true, user: (name: "subd", password: "s3cret"), jetStream: true), directory: directory)
        natsServers = [server]
        try server.waitForJetStream()
        func config(node: String, password: String) -> DaemonConfig {
            var config = DaemonConfig()
            config.extraLines = [
                "cluster:", "  servers: [\"nats://\(server.address)\"]", "  node: \(node)", "  user: subd",
                "  password: \(password)", "  replicas: 1",
            ]
            return config
        }
        let good = try startDaemon(config(node: "good", password: "s3cret"))
        let bad = try startDaemon(config(node: "bad", password: "wrong"))
        try eventually("the node with the right password caught up with the bucket", timeout: 30) {
            good.log.contains("numbers caught up")
        }
        XCTAssertEqual(try connect(good, "good").command("CREATE N"), .ok("created"))
        let local = try connect(bad, "bad")
        assertError(try local.command("CREATE N"), "LIMIT", "never connected")
        XCTAssertEqual(try local.command("PING"), .status("PONG"), "its own sessions are served")
        XCTAssertFalse(bad.log.contains("numbers caught up"))
    }
}
