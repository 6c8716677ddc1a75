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

    /// Values stored while their republish never reached a node, with no write after them (so the watch's gap check
    /// has nothing to see). The retained bucket is made before the nodes start (they use it as it is) and republishes
    /// only the keys under `SEEN.`, so the writes of `HIDDEN<n>` are stored and never republished.
    /// - node1's publication to a number whose value from node2 it never saw loses to it; 250 ms later
    ///   (`retainedLostWriteCheck`) node1 reads the bucket, delivers that value and writes on top of it, where before
    ///   it answered `-ERR LIMIT` after 2 s. (When node1's tail check, every 2 s, read the value first, the write did
    ///   not lose: the case is tried again on a new number, up to three times.)
    /// - node2 learns node1's value through its tail check (`KeyValueWatcher.tailCheck`): the stream's last revision
    ///   is past the last one its watch reported, so it reads the bucket, without any write after it.
    func testValuesWhoseRepublishNeverCameAreReadFromTheBucket() throws {
        let nodes = try startCluster(
            nodes: 2, logLevel: "debug",
            prepare: { servers in try makeRetainedBucket(on: servers[0], republishing: "SEEN.>") })
        let creator = try connect(nodes[0], "creator on node1")
        let subscriber1 = try connect(nodes[0], "subscriber on node1")
        let subscriber2 = try connect(nodes[1], "subscriber on node2", timeout: 20)
        let publisher1 = try connect(nodes[0], "publisher on node1")
        let publisher2 = try connect(nodes[1], "publisher on node2")

        var lostPath = false
        for attempt in 1...3 where !lostPath {
            let number = "HIDDEN\(attempt)"
            XCTAssertEqual(try creator.command("CREATE \(number) retain"), .ok("created"))
            try subscribe(subscriber1, number)
            try subscribe(subscriber2, number)
            XCTAssertEqual(try publisher2.command("SEND \(number) v1"), .ok("1"), "node2's own subscriber")
            let started = Date()
            XCTAssertEqual(try publisher1.command("SEND \(number) v2"), .ok("1"), "on top of v1, not -ERR LIMIT")
            let took = Date().timeIntervalSince(started)
            XCTAssertEqual(try revisions(subscriber1, 2), ["1 v1", "2 v2"], "node1: v1 first, then its own v2")
            XCTAssertEqual(try get(publisher1, number).1, .ok("2"))
            lostPath = nodes[0].log.contains("a write of '\(number)' lost to a value not seen here yet")
            print("\(number): node1's publication answered in \(took) s; it lost and read the bucket: \(lostPath)")

            // node2 never saw node1's v2 republished: its tail check finds it.
            XCTAssertEqual(try revisions(subscriber2, 2), ["1 v1", "2 v2"], "node2: its own v1, node1's v2")
        }
        XCTAssertTrue(lostPath, "in three tries node1's write lost to the value it had not seen at least once")
        try eventually("node1 counted its read in a caught-up line") {
            nodes[0].log.contains("reads for writes that lost to an unseen value: ")
        }
        try eventually("node2 counted its tail check's find in a caught-up line") {
            nodes[1].log.contains("unreported writes found at its end: ")
        }

        // A number whose writes are republished needs neither.
        XCTAssertEqual(try creator.command("CREATE SEEN.T retain"), .ok("created"))
        try subscribe(subscriber1, "SEEN.T")
        XCTAssertEqual(try publisher2.command("SEND SEEN.T s1"), .ok("0"))
        XCTAssertEqual(try revisions(subscriber1, 1), ["1 s1"])
        XCTAssertEqual(try publisher1.command("SEND SEEN.T s2"), .ok("1"))
        XCTAssertEqual(try revisions(subscriber1, 1), ["2 s2"])
        XCTAssertFalse(nodes[0].log.contains("a write of 'SEEN.T' lost"), "no read for a write that did not lose")
    }

    /// Makes the retained bucket's stream before any node does (`STREAM.CREATE`), republishing only the keys that
    /// match `keys`; tried again while JetStream has no meta leader yet.
    private func makeRetainedBucket(on server: NATSServerProcess, republishing keys: String) throws {
        let bucket = "subd_retained"
        // Only what differs from JetStream's defaults and matters here: a KV bucket's subjects, 8 values per key
        // (as subd makes it), and the partial republish.
        let config = """
            {"name":"KV_\(bucket)","subjects":["$KV.\(bucket).>"],"max_msgs_per_subject":8,\
            "republish":{"src":"$KV.\(bucket).\(keys)","dest":"subd.kv.\(bucket).\(keys)"}}
            """
        var reply = ""
        try eventually("the stream KV_\(bucket) is made", timeout: 30) {
            reply = (try? server.request("$JS.API.STREAM.CREATE.KV_\(bucket)", config, timeout: 2)) ?? ""
            return reply.contains("\"config\"") && !reply.contains("\"error\"")
        }
    }
}
