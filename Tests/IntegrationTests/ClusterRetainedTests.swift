import Foundation
import TestSupport
import XCTest

/// Retained numbers across nodes (docs/CLUSTER.md, step 5) with real processes: a retained number's value and
/// revision are the same on every node, whichever node publishes, and a node that starts later gets them.
final class ClusterRetainedTests: ClusterTestCase {
    /// The next `count` messages of `subscriber`, as `rev payload` lines.
    private func revisions(_ subscriber: LineClient, _ count: Int) throws -> [String] {
        try (0..<count).map { _ in
            let message = try subscriber.nextMessage()
            return "\(message.attributes["rev"] ?? "none") \(message.text)"
        }
    }

    func testRetainedValuesAndRevisionsAreTheSameOnEveryNodeWhoeverPublishes() throws {
        let nodes = try startCluster()
        let creator = try connect(nodes[0], "creator on node1")
        XCTAssertEqual(try creator.command("CREATE TEMP retain"), .ok("created"))
        XCTAssertEqual(try connect(nodes[1], "node2").command("CREATE TEMP retain"), .ok("exists"), "one number")

        var subscribers: [LineClient] = []
        for (index, node) in nodes.enumerated() {
            let subscriber = try connect(node, "subscriber on node\(index + 1)")
            try subscribe(subscriber, "TEMP")
            subscribers.append(subscriber)
        }
        let publisher2 = try connect(nodes[1], "publisher on node2")
        let publisher3 = try connect(nodes[2], "publisher on node3")
        XCTAssertEqual(try publisher2.command("HELLO name=p2").errorCode, nil)
        XCTAssertEqual(try publisher3.command("HELLO name=p3").errorCode, nil)

        // One at a time, alternately on node 2 and node 3: revisions 1 to 6 in that order on every node.
        for index in 1...6 {
            let publisher = index % 2 == 0 ? publisher2 : publisher3
            let payload = "t\(index)"
            try publisher.send("PUB TEMP \(payload.utf8.count) unit=C\n\(payload)\n")
            XCTAssertEqual(try publisher.readReply(), .ok("1"), "+OK counts this node's receivers (its subscriber)")
        }
        let expected = (1...6).map { "\($0) t\($0)" }
        for subscriber in subscribers {
            let first = try subscriber.nextMessage()
            XCTAssertEqual(first.attributes, ["from": "p3", "rev": "1", "unit": "C"], "\(subscriber.label)")
            XCTAssertEqual(["1 \(first.text)"] + (try revisions(subscriber, 5)), expected, "\(subscriber.label)")
        }

        // At once on node 2 and node 3 (each pipelining its publications): the bucket orders them, every node
        // delivers revisions 7 to 36 in that one order, and each publisher's own order is kept.
        let burst = 15
        try publisher2.send((0..<burst).map { "SEND TEMP a\($0)\n" }.joined())
        try publisher3.send((0..<burst).map { "SEND TEMP b\($0)\n" }.joined())
        for publisher in [publisher2, publisher3] {
            for _ in 0..<burst { XCTAssertEqual(try publisher.readReply(), .ok("1"), publisher.label) }
        }
        var seen: [[String]] = []
        for subscriber in subscribers { seen.append(try revisions(subscriber, 2 * burst)) }
        XCTAssertEqual(seen[0].map { $0.split(separator: " ")[0] }, (7..<(7 + 2 * burst)).map { "\($0)" })
        XCTAssertEqual(seen[1], seen[0], "node2 delivered the same revisions in the same order as node1")
        XCTAssertEqual(seen[2], seen[0], "node3 delivered the same revisions in the same order as node1")
        let payloads = seen[0].map { String($0.split(separator: " ")[1]) }
        XCTAssertEqual(payloads.filter { $0.hasPrefix("a") }, (0..<burst).map { "a\($0)" }, "node2's publisher's order")
        XCTAssertEqual(payloads.filter { $0.hasPrefix("b") }, (0..<burst).map { "b\($0)" }, "node3's publisher's order")
        let last = seen[0].last ?? ""
        for subscriber in subscribers { XCTAssertEqual(try subscriber.pushesBeforePing(), [], "nothing twice") }

        // GET on each node: the latest value; a new subscription on node 3 gets it pushed first.
        for subscriber in subscribers {
            let (value, reply) = try get(subscriber, "TEMP")
            XCTAssertEqual(value, last, subscriber.label)
            XCTAssertEqual(reply, .ok("36"), subscriber.label)
        }
        let newcomer = try connect(nodes[2], "newcomer on node3")
        XCTAssertEqual(try newcomer.command("SUB TEMP"), .ok())
        XCTAssertEqual(
            newcomer.takePushes().compactMap(\.message).map { "\($0.attributes["rev"] ?? "") \($0.text)" },
            [last])

        // A node started now gets the current value.
        let late = try startDaemon(nodeConfig(3, natsServers))
        try waitForCatchUp(late)
        let lateClient = try connect(late, "client on node4")
        XCTAssertEqual(try get(lateClient, "TEMP").0, last)
        XCTAssertEqual(try get(lateClient, "TEMP").1, .ok("36"))

        // REMOVE on node 1: gone everywhere; created again, it starts afresh (the old value is not its value).
        XCTAssertEqual(try creator.command("REMOVE TEMP"), .ok("removed 1"), "node1's subscriber")
        for subscriber in subscribers.dropFirst() + [newcomer] {
            XCTAssertEqual(try subscriber.nextPush(), .gone("TEMP"), subscriber.label)
        }
        try eventually("the removal reached node4") { try lateClient.command("GET TEMP").errorCode == "NOTFOUND" }
        XCTAssertEqual(try lateClient.command("CREATE TEMP retain"), .ok("created"))
        try eventually("node2 has the new TEMP, without a value") {
            let (value, reply) = try get(publisher2, "TEMP")
            return value == nil && reply == .ok("0")
        }
        XCTAssertEqual(try publisher3.command("SEND TEMP fresh"), .ok("0"))
        for node in [publisher2, creator, lateClient] {
            try eventually("\(node.label) has the new value as revision 1") { try get(node, "TEMP").0 == "1 fresh" }
        }

        // Without NATS, a publication to the retained number is refused and changes nothing; so are GET and SUB
        // (the value here may not be the latest any more).
        for server in natsServers { server.kill() }
        try eventually("node2 lost NATS") { nodes[1].log.contains("lost NATS") }
        assertError(try publisher2.command("SEND TEMP lost"), "LIMIT", "the retained bucket cannot be reached")
        assertError(try get(publisher2, "TEMP").1, "LIMIT", "GET while the buckets cannot be read")
        XCTAssertEqual(publisher2.takePushes(), [], "no value pushed")
        assertError(try publisher2.command("SUB TEMP"), "LIMIT", "SUB while the buckets cannot be read")
    }

    /// A node whose NATS server dies misses the values written while it is away; once it is connected again (to
    /// another server) its watch loads the current value: its subscriber gets it (revisions written meanwhile are
    /// missed, as a client's `watch` reports), `GET` answers it, and its own publications go on from there.
    func testANodeThatReconnectsGetsTheCurrentValue() throws {
        let nodes = try startCluster(nodes: 2)
        let publisher = try connect(nodes[0], "publisher on node1")
        // Reads with a 20 s timeout: after node2's reconnect its watch loads the current value, which on a loaded
        // machine can take more than the default 5 s (see below).
        let subscriber = try connect(nodes[1], "subscriber on node2", timeout: 20)
        XCTAssertEqual(try publisher.command("CREATE R retain"), .ok("created"))
        try subscribe(subscriber, "R")
        XCTAssertEqual(try publisher.command("SEND R v1"), .ok("0"))
        XCTAssertEqual(try revisions(subscriber, 1), ["1 v1"])

        natsServers[1].kill()  // node2's own server
        try eventually("node2 lost NATS") { nodes[1].log.contains("lost NATS") }
        // The bucket may elect a new leader first (its writes answer -ERR LIMIT meanwhile, changing nothing).
        for payload in ["v2", "v3"] {
            try eventually("node1 publishes \(payload)") {
                try publisher.command("SEND R \(payload)") == .ok("0")
            }
        }
        let (current, revision) = try get(publisher, "R")
        XCTAssertEqual(current, "3 v3")
        XCTAssertEqual(revision, .ok("3"))
        try eventually("node2 reconnected to another server", timeout: 30) {
            nodes[1].log.components(separatedBy: "cluster: connected to NATS").count > 2
        }
        // Whether node2 was back in time for v2 depends on how fast it reconnected: either way it ends at v3, in order,
        // each at most once.
        var seen = try revisions(subscriber, 1)
        if seen == ["2 v2"] { seen += try revisions(subscriber, 1) }
        XCTAssertEqual(seen.last, "3 v3", "the current value, once")
        XCTAssertEqual(try subscriber.pushesBeforePing(), [], "nothing twice")
        // GET answers once the node caught up again (-ERR LIMIT until then).
        // (The watches are made again after the reconnect, while the bucket may be electing a leader: on a busy
        // machine that took over 5 s once.)
        try eventually("node2's GET answers the current value") {
            let (value, reply) = try get(subscriber, "R")
            return value == "3 v3" && reply == .ok("3")
        }
        XCTAssertEqual(try subscriber.command("SEND R v4"), .ok("1"))
        XCTAssertEqual(try revisions(subscriber, 1), ["4 v4"])
        // node1's copy follows through its watch, a moment later (no subscriber of node1's has seen v4 yet).
        try eventually("node1's GET answers node2's v4") { try get(publisher, "R").0 == "4 v4" }
    }
}
