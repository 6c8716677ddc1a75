import Foundation
import TestSupport
import XCTest

/// Queue groups across subd nodes (docs/CLUSTER.md, "The message path", step 3), with real processes: of all the
/// members of a group in the cluster, one gets each publication; the publishing node serves the group itself when it
/// has a member; plain subscribers beside the group get every publication once; a node's queue subscription lives as
/// long as one of its sessions is a member. And the cluster's STATS counters.
final class ClusterQueueTests: ClusterTestCase {
    /// The messages each client received so far, read without waiting (`PING` flushes what arrived before it).
    private final class Inbox {
        let client: LineClient
        private(set) var messages: [Message] = []
        init(_ client: LineClient) { self.client = client }
        /// Reads what arrived; returns every message received so far.
        @discardableResult
        func read() throws -> [Message] {
            messages += try client.pushesBeforePing().compactMap(\.message)
            return messages
        }
        /// Forgets what was read.
        func clear() { messages = [] }
    }

    /// Publishes `count` messages `<prefix><i>` to `number` from `client`; ack: local counts this node's receivers.
    private func publish(_ client: LineClient, _ number: String, _ prefix: String, count: Int) throws -> [String] {
        var sent: [String] = []
        for index in 0..<count {
            let text = "\(prefix)\(index)"
            let reply = try client.command("SEND \(number) \(text)")
            guard reply.errorCode == nil else {
                XCTFail("SEND \(number) \(text): \(reply)")
                return sent
            }
            sent.append(text)
        }
        return sent
    }

    /// Reads `inboxes` until they hold `expected` messages together (and a moment more, so a copy too many is seen).
    private func settle(_ inboxes: [Inbox], total expected: Int, _ what: String) throws {
        try eventually(what) { try inboxes.reduce(0) { $0 + (try $1.read().count) } >= expected }
        usleep(300_000)
        for inbox in inboxes { try inbox.read() }
    }

    func testEachPublicationReachesOneMemberInTheWholeClusterAndPlainSubscribersEveryOne() throws {
        let nodes = try startCluster()
        let publishers = try (0..<3).map { try connect(nodes[$0], "publisher on node\($0 + 1)") }
        XCTAssertEqual(try publishers[0].command("CREATE JOBS"), .ok("created"))
        let members = try (0..<3).map { Inbox(try connect(nodes[$0], "member on node\($0 + 1)")) }
        for member in members { XCTAssertEqual(try member.client.command("SUB JOBS group=workers"), .ok()) }
        let plain2 = Inbox(try connect(nodes[1], "plain subscriber on node2"))
        let plain3 = Inbox(try connect(nodes[2], "plain subscriber on node3 (two overlapping patterns)"))
        try subscribe(plain2.client, "JOBS")
        try subscribe(plain3.client, "JOBS", ">")
        for node in 1...3 {
            try eventually("node\(node) holds one queue subscription for the group") {
                try queueSubscriptions(of: "node\(node)") == ["subd.m.JOBS workers"]
            }
        }
        XCTAssertEqual(try plainSubscriptions(of: "node1"), [], "a node with members only: its queue, no plain one")
        XCTAssertEqual(try plainSubscriptions(of: "node3"), ["subd.m.>", "subd.m.JOBS"])
        try eventually("every NATS server knows the other servers' members and plain subscribers") {
            // Each node is on its own server: server1 learns node2's and node3's plain subscriptions over two routes,
            // server2 node3's, server3 node2's.
            try (0..<3).allSatisfy { try knowsQueue(natsServers[$0], "subd.m.JOBS", "workers", count: 2) }
                && knows(natsServers[0], "subd.m.JOBS", count: 2) && knows(natsServers[0], "subd.m.>", count: 1)
                && knows(natsServers[1], "subd.m.JOBS", count: 1) && knows(natsServers[1], "subd.m.>", count: 1)
                && knows(natsServers[2], "subd.m.JOBS", count: 1)
        }

        // Local preference: each node's publications go to its own member, and to no other.
        var sent: [[String]] = []
        for (index, publisher) in publishers.enumerated() {
            sent.append(try publish(publisher, "JOBS", "n\(index + 1)-", count: 20))
        }
        try settle(members + [plain2, plain3], total: 60 + 60 + 60, "every publication delivered")
        for (index, member) in members.enumerated() {
            XCTAssertEqual(member.messages.map(\.text), sent[index], "node\(index + 1)'s member: its node's, in order")
            XCTAssertTrue(member.messages.allSatisfy { $0.attributes["group"] == "workers" })
        }
        for plain in [plain2, plain3] {
            XCTAssertEqual(plain.messages.count, 60, "\(plain.client.label): every publication once")
            for index in 0..<3 {
                XCTAssertEqual(
                    plain.messages.map(\.text).filter { $0.hasPrefix("n\(index + 1)-") }, sent[index],
                    "\(plain.client.label): node\(index + 1)'s publications in order")
            }
            XCTAssertTrue(plain.messages.allSatisfy { $0.attributes["group"] == nil })
        }

        // node1's member leaves (UNSUB): its node's queue subscription ends; node1's publications go to one member
        // on node2 or node3, each exactly once.
        for inbox in members + [plain2, plain3] { inbox.clear() }
        XCTAssertEqual(try members[0].client.command("UNSUB JOBS"), .ok())
        try eventually("node1 no longer holds the group's queue subscription") {
            try queueSubscriptions(of: "node1").isEmpty
        }
        let fromNode1 = try publish(publishers[0], "JOBS", "after-unsub-", count: 40)
        try settle(members + [plain2, plain3], total: 40 + 40 + 40, "node1's publications delivered")
        XCTAssertEqual(members[0].messages, [], "a member that left gets nothing")
        let served = members[1].messages.map(\.text) + members[2].messages.map(\.text)
        XCTAssertEqual(served.count, 40, "one member in the whole cluster per publication")
        XCTAssertEqual(Set(served), Set(fromNode1), "each publication served")
        XCTAssertEqual(plain2.messages.map(\.text), fromNode1, "plain subscribers: every publication once, in order")
        XCTAssertEqual(plain3.messages.map(\.text), fromNode1)

        // node3's member closes its connection: node3's queue subscription ends, node2's member gets everything.
        for inbox in members + [plain2, plain3] { inbox.clear() }
        members[2].client.close()
        try eventually("node3 no longer holds the group's queue subscription") {
            try queueSubscriptions(of: "node3").isEmpty
        }
        try eventually("node1's NATS server forgot node3's member") {
            try !knowsQueue(natsServers[0], "subd.m.JOBS", "workers", count: 2)
        }
        let afterClose = try publish(publishers[0], "JOBS", "after-close-", count: 10)
        try settle([members[1], plain2], total: 20, "node1's publications delivered")
        XCTAssertEqual(members[1].messages.map(\.text), afterClose, "the group's last member gets every publication")
        XCTAssertEqual(plain2.messages.map(\.text), afterClose)
    }

    /// A member on the publishing node whose `from=` filter does not pass does not serve its group there: the other
    /// nodes' members are given the publication (NATS never picks the publisher's own queue subscription). A
    /// subscription that moves into a group (the same pattern subscribed again with `group=`) moves its interest
    /// upstream from the plain subscription to the group's queue.
    func testFiltersAndAMoveIntoAGroup() throws {
        let nodes = try startCluster(nodes: 2)
        let publisher = try connect(nodes[0], "publisher on node1")
        XCTAssertEqual(try publisher.command("CREATE TASKS"), .ok("created"))
        XCTAssertEqual(try publisher.command("HELLO name=lab").errorCode, nil)
        let filtered1 = Inbox(try connect(nodes[0], "member on node1 wanting another sender"))
        XCTAssertEqual(try filtered1.client.command("SUB TASKS from=someone-else group=g"), .ok())
        let member2 = Inbox(try connect(nodes[1], "member on node2"))
        XCTAssertEqual(try member2.client.command("SUB TASKS"), .ok())
        try eventually("node2 holds TASKS as a plain subscription") {
            try plainSubscriptions(of: "node2") == ["subd.m.TASKS"]
        }
        XCTAssertEqual(try member2.client.command("SUB TASKS group=g"), .ok(), "the same pattern, now in a group")
        try eventually("node2's interest moved to the group's queue") {
            try queueSubscriptions(of: "node2") == ["subd.m.TASKS g"] && plainSubscriptions(of: "node2").isEmpty
        }
        try eventually("node1's NATS server knows node2's member") {
            try knowsQueue(natsServers[0], "subd.m.TASKS", "g", count: 1)
        }
        let sent = try publish(publisher, "TASKS", "t", count: 10)
        try settle([filtered1, member2], total: 10, "every publication served")
        XCTAssertEqual(filtered1.messages, [])
        XCTAssertEqual(member2.messages.map(\.text), sent)
        XCTAssertTrue(member2.messages.allSatisfy { $0.attributes["group"] == "g" && $0.from == "lab" })

        // A removed number ends its exact subscriptions, members included, and their queue subscriptions with them.
        XCTAssertEqual(try publisher.command("REMOVE TASKS"), .ok("removed 1"), "node1's member was told GONE")
        try eventually("the queue subscriptions went with the number") {
            try queueSubscriptions(of: "node1").isEmpty && queueSubscriptions(of: "node2").isEmpty
        }
    }

    /// A pattern whose upstream subscribe the NATS client refuses stays held and is tried again at the next connect
    /// (here the client refuses for good: `odd*` is a valid subd token, which NATSSubject takes for a misplaced
    /// wildcard), and the node goes on serving the patterns it could subscribe.
    func testAPatternTheClientRefusedIsTriedAgainAtTheNextConnect() throws {
        let nodes = try startCluster(nodes: 2)
        let refused = "cannot subscribe upstream to odd*.> (tried again at the next connect)"
        let subscriber = try connect(nodes[1], "subscriber on node2")
        XCTAssertEqual(try subscriber.command("SUB odd*.>"), .ok(), "held locally")
        XCTAssertEqual(try subscriber.command("SUB odd*.> group=g"), .ok(), "moved into a group: tried as a queue")
        try subscribe(subscriber, "N.>")
        try eventually("node2 tried both") {
            nodes[1].log.components(separatedBy: refused).count == 2
                && nodes[1].log.contains("cannot subscribe upstream to odd*.> in group g")
        }
        natsServers[1].kill()  // node2's own server
        try eventually("node2 reconnected and tried again", timeout: 30) {
            nodes[1].log.components(separatedBy: refused).count == 2
                && nodes[1].log.components(separatedBy: "cannot subscribe upstream to odd*.> in group g").count == 3
        }
        try eventually("node2's other pattern is upstream again") {
            try plainSubscriptions(of: "node2") == ["subd.m.N.>"]
        }
    }

    /// STATS `cluster_received` counts each publication of another node once, however many subscriptions (plain,
    /// overlapping, a group's queue) brought it; `cluster_dropped` counts a publication NATS would not take (here:
    /// over the NATS server's `max_payload`), which reached this node's subscribers only. A node without `cluster:`
    /// has no `cluster_*` key.
    func testStatsCountPublicationsReceivedAndDropped() throws {
        let server = try NATSServerProcess(
            .init(monitoring: true, maxPayload: 64 * 1024, jetStream: true), directory: directory)
        natsServers = [server]
        try server.waitForJetStream()
        func config(_ node: String) -> DaemonConfig {
            var config = DaemonConfig()
            config.extraLines = [
                "cluster:", "  servers: [\"nats://\(server.address)\"]", "  node: \(node)", "  replicas: 1",
                "  ack: local",  // the replies below count node1's receivers
            ]
            return config
        }
        let nodes = try ["node1", "node2"].map { try startDaemon(config($0)) }
        for node in nodes {
            try eventually("\(node.server) caught up with the numbers bucket", timeout: 30) {
                node.log.contains("numbers caught up")
            }
        }
        let publisher = try connect(nodes[0], "publisher on node1")
        XCTAssertEqual(try publisher.command("CREATE N"), .ok("created"))
        let local = Inbox(try connect(nodes[0], "subscriber on node1"))
        try subscribe(local.client, "N")
        let overlapping = Inbox(try connect(nodes[1], "subscriber on node2"))
        try subscribe(overlapping.client, "N", ">")
        let member = Inbox(try connect(nodes[1], "member on node2"))
        XCTAssertEqual(try member.client.command("SUB N group=g"), .ok())
        try eventually("node2's three upstream subscriptions are on the server") {
            try upstream(of: "node2").sorted() == ["subd.m.>", "subd.m.N", "subd.m.N"]
        }

        let sent = try publish(publisher, "N", "m", count: 5)
        try settle([overlapping, member], total: 10, "node2's subscribers served")
        XCTAssertEqual(overlapping.messages.map(\.text), sent)
        XCTAssertEqual(member.messages.map(\.text), sent)
        let received = try stats(try connect(nodes[1], "stats on node2"))
        XCTAssertEqual(received["cluster_received"], "5", "three copies of each publication, counted once")
        XCTAssertEqual(received["cluster_dropped"], "0")

        // Over NATS's max_payload (64 KiB) but within subd's (1 MiB): node1's subscriber only.
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: 100 * 1024)
        XCTAssertEqual(try publisher.pub("N", big), .ok("1"))
        try eventually("node1's subscriber got the big one") { try local.read().last?.payload.count == 100 * 1024 }
        let publishing = try stats(publisher)
        XCTAssertEqual(publishing["cluster_dropped"], "1")
        XCTAssertEqual(publishing["cluster_received"], "0")
        XCTAssertEqual(try publisher.command("SEND N after"), .ok("1"))
        try settle([overlapping], total: 6, "the next publication crosses")
        XCTAssertEqual(overlapping.messages.last?.text, "after", "the big one never reached node2")
        XCTAssertEqual(try stats(overlapping.client)["cluster_received"], "6")

        let single = try startDaemon(DaemonConfig())
        XCTAssertNil(
            try stats(try connect(single, "single node"))["cluster_dropped"], "no cluster key without cluster:")
    }
}
