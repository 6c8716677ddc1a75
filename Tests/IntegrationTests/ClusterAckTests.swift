import Foundation
import TestSupport
import XCTest

/// The cross-node `+OK <receivers>` (docs/CLUSTER.md, step 4) with real processes: three clustered `nats-server`s and
/// three subd nodes. node1 publishes with `ack: all` (`ack_timeout: 5`, the most allowed: long enough to tell a wait
/// for the timeout from an answer, and for every node's confirmation to come in time on a loaded machine, where a
/// NATS round trip can take over a second), node2 with the default (`all`), node3 with `ack: local`. Its publishers
/// read with a 20 s timeout, beyond `ack_timeout`.
final class ClusterAckTests: ClusterTestCase {
    /// The lines of `node`'s log.
    private func logLines(_ node: Daemon) -> [Substring] { node.log.split(separator: "\n") }

    /// True once `node`'s interest bucket says that the node named `name` holds `count` upstream patterns.
    private func sees(_ node: Daemon, _ name: String, holding count: Int) -> Bool {
        logLines(node).contains { $0.contains("node \(name)-") && $0.hasSuffix("holds \(count) pattern(s) upstream") }
    }

    func testPlusOKCountsEveryNodesReceiversWaitsForAStoppedNodeUntilTheTimeoutAndKeepsReplyOrder() throws {
        let nodes = try startCluster(logLevel: "debug") { index in
            [["  ack: all", "  ack_timeout: 5"], [], ["  ack: local"]][index]
        }
        for node in nodes {
            try eventually("\(node.server) opened the interest bucket", timeout: 30) {
                node.log.contains("interest bucket subd_interest open")
            }
        }
        let publisher = try connect(nodes[0], "publisher on node1", timeout: 20)
        let localOnly = try connect(nodes[0], "LOCAL.ONLY subscriber on node1")
        XCTAssertEqual(try publisher.command("CREATE ACK.N"), .ok("created"))
        XCTAssertEqual(try publisher.command("CREATE LOCAL.ONLY"), .ok("created"))
        try subscribe(localOnly, "LOCAL.ONLY")
        // 0 subscribers of ACK.N on node1, 2 on node2, 3 on node3 (one of them through a wildcard).
        var subscribers: [LineClient] = []
        for (node, pattern) in [(1, "ACK.N"), (1, "ACK.N"), (2, "ACK.N"), (2, "ACK.N"), (2, "ACK.>")] {
            let client = try connect(nodes[node], "\(pattern) subscriber on node\(node + 1)")
            try subscribe(client, pattern)
            subscribers.append(client)
        }
        try eventually("node1 knows from the interest bucket what nodes 2 and 3 hold") {
            sees(nodes[0], "node2", holding: 1) && sees(nodes[0], "node3", holding: 2)
        }
        try eventually("the interest of nodes 2 and 3 reached node1's NATS server") {
            try knows(natsServers[0], "subd.m.ACK.N", count: 2) && knows(natsServers[0], "subd.m.ACK.>", count: 1)
        }

        // ack: all on node1: 0 here + 2 on node2 + 3 on node3.
        XCTAssertEqual(try publisher.command("SEND ACK.N one"), .ok("5"), "every node's receivers")
        // ack: local on node3: its own 3 only.
        XCTAssertEqual(try subscribers[2].command("SEND ACK.N two"), .ok("3"), "ack: local counts node3's receivers")
        for subscriber in subscribers {
            XCTAssertEqual(try subscriber.nextMessage().payload, Array("one".utf8), subscriber.label)
            XCTAssertEqual(try subscriber.nextMessage().payload, Array("two".utf8), subscriber.label)
        }

        // Pipelined: a reply that waits for other nodes holds the ones behind it, so they keep the commands' order.
        try publisher.send("SEND ACK.N p1\nSEND LOCAL.ONLY p2\nSEND ACK.N p3\nPING\n")
        XCTAssertEqual(try publisher.readReply(), .ok("5"))
        XCTAssertEqual(try publisher.readReply(), .ok("1"), "the local-only answer after the one that waited")
        XCTAssertEqual(try publisher.readReply(), .ok("5"))
        XCTAssertEqual(try publisher.readReply(), .status("PONG"))
        XCTAssertEqual(try localOnly.nextMessage(), Message("LOCAL.ONLY", text: "p2"))
        for subscriber in subscribers {
            XCTAssertEqual(try subscriber.nextMessage().payload, Array("p1".utf8), subscriber.label)
            XCTAssertEqual(try subscriber.nextMessage().payload, Array("p3".utf8), subscriber.label)
        }
        var values = try stats(publisher)
        XCTAssertEqual(values["cluster_acks_waited"], "3")
        XCTAssertEqual(values["cluster_ack_timeouts"], "0")
        XCTAssertEqual(values["cluster_late_acks"], "0")

        // node3's subd stopped: it cannot confirm, so node1 answers at the timeout with node2's count.
        let node3 = nodes[2].child.pid
        ChildProcess.stop(pid: node3)
        var continued = false
        defer { if !continued { kill(node3, SIGCONT) } }
        let started = Date()
        XCTAssertEqual(try publisher.command("SEND ACK.N stopped"), .ok("2"), "node2's 2; node3 did not answer")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 4.95, "answered at ack_timeout (5 s)")
        values = try stats(publisher)
        XCTAssertEqual(values["cluster_ack_timeouts"], "1")
        XCTAssertEqual(values["cluster_late_acks"], "0")

        XCTAssertEqual(kill(node3, SIGCONT), 0)
        continued = true
        for subscriber in subscribers {
            XCTAssertEqual(try subscriber.nextMessage().payload, Array("stopped".utf8), subscriber.label)
        }
        try eventually("node3's confirmation, after the answer, is counted late") {
            try stats(publisher)["cluster_late_acks"] == "1"
        }
        XCTAssertEqual(try publisher.command("SEND ACK.N again"), .ok("5"), "node3 answers again")
        values = try stats(publisher)
        XCTAssertEqual(values["cluster_acks_waited"], "5")
        XCTAssertEqual(values["cluster_ack_timeouts"], "1")
        XCTAssertEqual(values["cluster_late_acks"], "1")

        // A queue group member on node2 beside its plain subscribers: node2 uses the plain copy and the group's copy
        // and confirms each; both count. node3 is stopped again, so the answer waits for the timeout and every
        // confirmation node2 sends is in it: 2 plain receivers and the member (before, the member's confirmation was
        // dropped as node2's second).
        let member = try connect(nodes[1], "group member on node2")
        XCTAssertEqual(try member.command("SUB ACK.N group=g"), .ok())
        try eventually("node2's queue subscription reached node1's NATS server") {
            try knowsQueue(natsServers[0], "subd.m.ACK.N", "g", count: 1)
        }
        ChildProcess.stop(pid: node3)
        XCTAssertEqual(try publisher.command("SEND ACK.N grouped"), .ok("3"), "node2's 2 and its group member")
        XCTAssertEqual(kill(node3, SIGCONT), 0)
        XCTAssertEqual(try member.nextMessage().payload, Array("grouped".utf8))
        try eventually("node3's confirmation counted late") {
            try stats(publisher)["cluster_late_acks"] == "2"
        }
    }

    /// Queue groups in the count (issue 23, item 2): a node that holds only group members is expected, once per group
    /// (NATS gives each group's copy to one of its nodes), and a group the publishing node served itself is not
    /// waited for. `ack_timeout: 5` on node1, so a count that waited for the timeout is seen in STATS, and every count
    /// is exact, not a race against the confirmations.
    func testANodeHoldingOnlyGroupMembersIsExpectedAndCounted() throws {
        let nodes = try startCluster(logLevel: "debug") { index in
            [["  ack: all", "  ack_timeout: 5"], [], []][index]
        }
        for node in nodes {
            try eventually("\(node.server) opened the interest bucket", timeout: 30) {
                node.log.contains("interest bucket subd_interest open")
            }
        }
        let publisher = try connect(nodes[0], "publisher on node1", timeout: 20)
        XCTAssertEqual(try publisher.command("CREATE GRP.N"), .ok("created"))
        // node3 holds group members only: `workers` on GRP.N, `audit` on GRP.>.
        let worker3 = try connect(nodes[2], "workers member on node3")
        let audit3 = try connect(nodes[2], "audit member on node3")
        XCTAssertEqual(try worker3.command("SUB GRP.N group=workers"), .ok())
        XCTAssertEqual(try audit3.command("SUB GRP.> group=audit"), .ok())
        try eventually("node1 knows from the interest bucket that node3 holds two patterns in groups") {
            logLines(nodes[0]).contains {
                $0.contains("node node3-") && $0.hasSuffix("holds 2 pattern(s) in groups upstream")
            }
        }
        try eventually("node3's queue subscriptions reached node1's NATS server") {
            try knowsQueue(natsServers[0], "subd.m.GRP.N", "workers", count: 1)
                && knowsQueue(natsServers[0], "subd.m.GRP.>", "audit", count: 1)
        }
        for index in 0..<20 {
            XCTAssertEqual(try publisher.command("SEND GRP.N only\(index)"), .ok("2"), "node3's two groups, one each")
        }
        for member in [worker3, audit3] {
            XCTAssertEqual(try member.pushesBeforePing().compactMap(\.message).count, 20, member.label)
        }

        // node2 adds a plain subscriber and a `workers` member: each publication reaches the plain subscriber, one
        // `workers` member (node2's or node3's, NATS picks) and node3's `audit` member.
        let plain2 = try connect(nodes[1], "plain subscriber on node2")
        let worker2 = try connect(nodes[1], "workers member on node2")
        try subscribe(plain2, "GRP.N")
        XCTAssertEqual(try worker2.command("SUB GRP.N group=workers"), .ok())
        try eventually("node1 knows node2's plain pattern and its pattern in a group") {
            sees(nodes[0], "node2", holding: 1)
                && logLines(nodes[0]).contains {
                    $0.contains("node node2-") && $0.hasSuffix("holds 1 pattern(s) in groups upstream")
                }
        }
        try eventually("node2's subscriptions reached node1's NATS server") {
            try knows(natsServers[0], "subd.m.GRP.N", count: 1)
                && knowsQueue(natsServers[0], "subd.m.GRP.N", "workers", count: 2)
        }
        for index in 0..<50 {
            XCTAssertEqual(try publisher.command("SEND GRP.N mixed\(index)"), .ok("3"), "plain, workers and audit")
        }
        XCTAssertEqual(try plain2.pushesBeforePing().compactMap(\.message).count, 50)
        XCTAssertEqual(try audit3.pushesBeforePing().compactMap(\.message).count, 50)
        let workers = try [worker2, worker3].map { try $0.pushesBeforePing().compactMap(\.message).count }
        XCTAssertEqual(workers.reduce(0, +), 50, "one workers member per publication: \(workers)")

        // A `workers` member on node1: node1 serves that group itself and names it, so only `audit` and node2's plain
        // copy are waited for; no answer waits for the timeout.
        let worker1 = try connect(nodes[0], "workers member on node1")
        XCTAssertEqual(try worker1.command("SUB GRP.N group=workers"), .ok())
        for index in 0..<20 {
            XCTAssertEqual(try publisher.command("SEND GRP.N served\(index)"), .ok("3"), "node1's member, plain, audit")
        }
        XCTAssertEqual(try worker1.pushesBeforePing().compactMap(\.message).count, 20)
        let values = try stats(publisher)
        XCTAssertEqual(values["cluster_acks_waited"], "90")
        XCTAssertEqual(values["cluster_ack_timeouts"], "0")
        XCTAssertEqual(values["cluster_late_acks"], "0")
    }
}
