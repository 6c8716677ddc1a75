import Foundation
import TestSupport
import XCTest

/// Counts across nodes everywhere the protocol gives one (issue 23, item 2; docs/CLUSTER.md, steps 5 and 6), with
/// real processes: `+OK removed <k>` counts the subscribers told `GONE` on every node, and the `+OK <n>` of a
/// publication to a shared retained number counts every node's receivers. node1 has `ack: all` with `ack_timeout: 5`
/// (the most allowed: a count that waited for the timeout shows in STATS, so every count checked is exact, not a race,
/// and every node's confirmation comes in time also on a loaded machine), node2 the default, node3 `ack: local`. The
/// clients of node1 read with a 20 s timeout, beyond `ack_timeout`.
final class ClusterCountsTests: ClusterTestCase {
    /// Three nodes whose interest buckets are open.
    private func startNodes() throws -> [Daemon] {
        let nodes = try startCluster(logLevel: "debug") { index in
            [["  ack: all", "  ack_timeout: 5"], [], ["  ack: local"]][index]
        }
        for node in nodes {
            try eventually("\(node.server) opened the interest bucket", timeout: 30) {
                node.log.contains("interest bucket subd_interest open")
            }
        }
        return nodes
    }

    /// True once `node` logged that the node named `name` holds `count` patterns upstream outside groups (and
    /// `grouped` in groups, when given).
    private func sees(_ node: Daemon, _ name: String, holding count: Int, inGroups grouped: Int? = nil) -> Bool {
        let lines = node.log.split(separator: "\n").filter { $0.contains("node \(name)-") }
        let plain = lines.contains { $0.hasSuffix("holds \(count) pattern(s) upstream") }
        guard let grouped else { return plain }
        return plain && lines.contains { $0.hasSuffix("holds \(grouped) pattern(s) in groups upstream") }
    }

    /// The STATS counters of the cross-node waits: waited, timed out, late.
    private func ackCounters(_ client: LineClient) throws -> [String?] {
        let values = try stats(client)
        return ["cluster_acks_waited", "cluster_ack_timeouts", "cluster_late_acks"].map { values[$0] }
    }

    func testRemoveCountsTheSubscribersToldGoneOnEveryNode() throws {
        let nodes = try startNodes()
        let remover = try connect(nodes[0], "remover on node1", timeout: 20)
        try create(remover, "RM.A", "RM.B", "RM.C", "RM.D")
        // RM.A: exact subscribers, 1 on node1, 2 on node2, 1 on node3; beside them a wildcard subscriber on node3,
        // which is not told GONE. RM.B: one exact subscriber on node2 and one on node3. RM.D: a group member on node2.
        var toldA: [LineClient] = []
        for node in [0, 1, 1, 2] {
            let client = try connect(nodes[node], "RM.A subscriber on node\(node + 1)")
            try subscribe(client, "RM.A")
            toldA.append(client)
        }
        let wildcard3 = try connect(nodes[2], "RM.> subscriber on node3")
        try subscribe(wildcard3, "RM.>")
        let toldB = try [1, 2].map { node in
            let client = try connect(nodes[node], "RM.B subscriber on node\(node + 1)")
            try subscribe(client, "RM.B")
            return client
        }
        let member2 = try connect(nodes[1], "RM.D group member on node2")
        XCTAssertEqual(try member2.command("SUB RM.D group=g"), .ok())
        try eventually("node1 knows from the interest bucket what nodes 2 and 3 hold") {
            sees(nodes[0], "node2", holding: 2, inGroups: 1) && sees(nodes[0], "node3", holding: 3)
        }

        XCTAssertEqual(try remover.command("REMOVE RM.A"), .ok("removed 4"), "node1's 1, node2's 2, node3's 1")
        for client in toldA { XCTAssertEqual(try client.nextPush(), .gone("RM.A"), client.label) }
        XCTAssertEqual(try wildcard3.pushesBeforePing(), [], "a wildcard subscriber is not told")
        // Only node3's wildcard matches RM.C: node3 is expected and confirms its 0 (no wait for the timeout).
        XCTAssertEqual(try remover.command("REMOVE RM.C"), .ok("removed 0"))
        // node2 holds RM.D in a group only: it is expected all the same (its member is told GONE), node3 for RM.>.
        XCTAssertEqual(try remover.command("REMOVE RM.D"), .ok("removed 1"), "node2's group member")
        XCTAssertEqual(try member2.nextPush(), .gone("RM.D"))
        XCTAssertEqual(try ackCounters(remover), ["3", "0", "0"], "three waits, none for the timeout, none late")

        // ack: local on node3: its own subscriber only, at once; node2's is told all the same.
        XCTAssertEqual(try wildcard3.command("REMOVE RM.B"), .ok("removed 1"), "ack: local counts node3's only")
        for client in toldB { XCTAssertEqual(try client.nextPush(), .gone("RM.B"), client.label) }
        XCTAssertEqual(try ackCounters(remover), ["3", "0", "0"], "node1 confirms nothing to a remover not waiting")
    }

    func testARetainedPublicationCountsEveryNodesReceiversOnce() throws {
        let nodes = try startNodes()
        let publisher = try connect(nodes[0], "publisher on node1", timeout: 20)
        XCTAssertEqual(try publisher.command("HELLO name=p1").errorCode, nil)
        XCTAssertEqual(try publisher.command("CREATE PRICE retain"), .ok("created"))
        // node1: 1 subscriber; node2: 1, one whose from= refuses p1, a member of group g; node3: 1 and two members of
        // g. Each node serves its own members of g (every node applies every value): one on node2, one on node3.
        var plain: [LineClient] = []
        for node in [0, 1, 2] {
            let client = try connect(nodes[node], "subscriber on node\(node + 1)")
            try subscribe(client, "PRICE")
            plain.append(client)
        }
        let filtered2 = try connect(nodes[1], "from=someone-else on node2")
        XCTAssertEqual(try filtered2.command("SUB PRICE from=someone-else"), .ok())
        let members = try [1, 2, 2].map { node in
            let client = try connect(nodes[node], "g member on node\(node + 1)")
            XCTAssertEqual(try client.command("SUB PRICE group=g"), .ok())
            return client
        }
        try eventually("node1 knows from the interest bucket what nodes 2 and 3 hold") {
            sees(nodes[0], "node2", holding: 1, inGroups: 1) && sees(nodes[0], "node3", holding: 1, inGroups: 1)
        }

        let rounds = 5
        for index in 1...rounds {
            XCTAssertEqual(try publisher.command("SEND PRICE v\(index)"), .ok("5"), "1 + node2's 2 + node3's 2")
        }
        XCTAssertEqual(try ackCounters(publisher), ["\(rounds)", "0", "0"])
        var received = 0
        for client in plain + members + [filtered2] {
            received += try client.pushesBeforePing().compactMap(\.message).count
        }
        XCTAssertEqual(received, 5 * rounds, "the counts are the sessions that received, no more")
        XCTAssertEqual(try filtered2.pushesBeforePing(), [], "from= filtered")

        // ack: local on node3: its own 2.
        let publisher3 = try connect(nodes[2], "publisher on node3")
        XCTAssertEqual(try publisher3.command("SEND PRICE local"), .ok("2"), "ack: local counts node3's only")
        for client in plain { XCTAssertEqual(try client.nextMessage().text, "local", client.label) }

        // node3 stopped: node1 answers at the timeout with what node2 confirmed; node3's confirmation, once it runs
        // again, is late and counted in no answer.
        let node3 = nodes[2].child.pid
        ChildProcess.stop(pid: node3)
        var continued = false
        defer { if !continued { kill(node3, SIGCONT) } }
        XCTAssertEqual(try publisher.command("SEND PRICE stopped"), .ok("3"), "node1's 1 and node2's 2")
        XCTAssertEqual(kill(node3, SIGCONT), 0)
        continued = true
        XCTAssertEqual(try plain[2].nextMessage().text, "stopped")
        try eventually("node3's confirmation came after the answer") {
            try ackCounters(publisher) == ["\(rounds + 1)", "1", "1"]
        }
        XCTAssertEqual(try publisher.command("SEND PRICE again"), .ok("5"), "node3 confirms again")
        XCTAssertEqual(try ackCounters(publisher), ["\(rounds + 2)", "1", "1"])
    }
}
