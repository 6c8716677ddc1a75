import Foundation
import TestSupport
import XCTest

/// Pipelined confirmations (issue 23, item 1; docs/CLUSTER.md, step 4) with real processes: three clustered
/// `nats-server`s and three subd nodes. node1 publishes with `ack: all`, `ack_timeout: 3` and `ack_window: 3`; node3's
/// subd is stopped (SIGSTOP) where a publication must wait for its timeout, so what runs while it waits is seen in
/// the order of the frames on the publisher's socket, not in timings. 3 s: room for every node's confirmation on a
/// loaded machine (a NATS round trip there can take over a second), and still well within the 5 s a SIGTERM drain
/// may take (the last check: a reply that waits for its timeout during the drain). node1's clients read with a 20 s
/// timeout.
final class ClusterPipelineTests: ClusterTestCase {
    func testPublicationsWaitConcurrentlyWithinTheWindowAndAnswerInOrder() throws {
        let nodes = try startCluster(logLevel: "debug") { index in
            [["  ack: all", "  ack_timeout: 3", "  ack_window: 3"], [], []][index]
        }
        for node in nodes {
            try eventually("\(node.server) opened the interest bucket", timeout: 30) {
                node.log.contains("interest bucket subd_interest open")
            }
        }
        // The publisher subscribes too: its own copies (delivered at once, before any count is complete) show on its
        // socket which publications ran before which replies.
        let publisher = try connect(nodes[0], "publisher on node1", timeout: 20)
        XCTAssertEqual(try publisher.command("CREATE PIPE.N"), .ok("created"))
        try subscribe(publisher, "PIPE.N")
        let onNode2 = try connect(nodes[1], "subscriber on node2")
        let onNode3 = try connect(nodes[2], "subscriber on node3")
        try subscribe(onNode2, "PIPE.N")
        try subscribe(onNode3, "PIPE.N")
        try eventually("node1 knows from the interest bucket what nodes 2 and 3 hold") {
            let lines = nodes[0].log.split(separator: "\n")
            return ["node2", "node3"].allSatisfy { name in
                lines.contains { $0.contains("node \(name)-") && $0.hasSuffix("holds 1 pattern(s) upstream") }
            }
        }
        try eventually("the interest of nodes 2 and 3 reached node1's NATS server") {
            try knows(natsServers[0], "subd.m.PIPE.N", count: 2)
        }

        // Every node answers: 60 pipelined publications, each counted on all three nodes, in order, then the PING's.
        let count = 60
        try publisher.send((0..<count).map { "SEND PIPE.N m\($0)\n" }.joined() + "PING\n")
        for index in 0..<count { XCTAssertEqual(try publisher.readReply(), .ok("3"), "publication \(index)") }
        XCTAssertEqual(try publisher.readReply(), .status("PONG"))
        for client in [publisher, onNode2, onNode3] {
            for index in 0..<count {
                XCTAssertEqual(try client.nextMessage().payload, Array("m\(index)".utf8), client.label)
            }
        }
        XCTAssertEqual(try stats(publisher)["cluster_ack_timeouts"], "0")

        // Publications of one write to two numbers, with a name and info pairs: node1 sends each run of publications
        // to one number as one NATS message (a batch), a new one at each change of number. A subscriber on node2 to
        // both (through a wildcard beside its exact subscription: two copies of each, one delivered) gets every one,
        // in order, with its from= and pairs.
        XCTAssertEqual(try publisher.command("CREATE PIPE.M"), .ok("created"))
        let both = try connect(nodes[1], "PIPE.N and PIPE.> subscriber on node2")
        try subscribe(both, "PIPE.N", "PIPE.>")
        try eventually("node2's wildcard reached node1's NATS server") {
            try knows(natsServers[0], "subd.m.PIPE.>", count: 1)
        }
        guard case .status(let hello) = try publisher.command("HELLO name=pipe-publisher"), hello.hasPrefix("OK") else {
            return XCTFail("HELLO")
        }
        let sequence = ["N", "N", "M", "N", "M", "M", "N"].enumerated().map { ("PIPE.\($1)", "b\($0)") }
        try publisher.send(sequence.map { "PUB \($0.0) \($0.1.utf8.count) k=\($0.1) z=1\n\($0.1)\n" }.joined())
        for (number, text) in sequence {
            // PIPE.N: the publisher itself, node2's and node3's subscribers, and the one to both; PIPE.M: that one.
            XCTAssertEqual(try publisher.readReply(), .ok(number == "PIPE.N" ? "4" : "1"), text)
        }
        for (number, text) in sequence {
            let message = try both.nextMessage()
            XCTAssertEqual(message.number, number)
            XCTAssertEqual(String(decoding: message.payload, as: UTF8.self), text)
            XCTAssertEqual(message.attributes["from"], "pipe-publisher")
            XCTAssertEqual(message.attributes["k"], text)
            XCTAssertEqual(message.attributes["z"], "1")
        }
        XCTAssertEqual(try both.pushesBeforePing().compactMap(\.message), [], "each publication once")
        XCTAssertEqual(try both.command("UNSUB PIPE.N"), .ok())
        XCTAssertEqual(try both.command("UNSUB PIPE.>"), .ok())
        let onN = sequence.filter { $0.0 == "PIPE.N" }.map { Array($0.1.utf8) }
        for client in [publisher, onNode2, onNode3] {
            XCTAssertEqual(try onN.map { _ in try client.nextMessage().payload }, onN, client.label)
        }

        // Publications to a number node2 creates meanwhile: node1 looks each one up in the numbers bucket (NOTFOUND
        // while it has none); the one in flight when the number is stored finds it there, before or after node1's
        // watch brought it, and runs again: it then waits for node3's confirmation without holding the session (once,
        // the session hung there). Every one is answered, in order: NOTFOUND until the number is there, then counted
        // on node3.
        let creator = try connect(nodes[1], "creator on node2")
        let looking = try connect(nodes[2], "LOOK.> subscriber on node3")
        try subscribe(looking, "LOOK.>")
        try eventually("node3's LOOK.> reached node1's NATS server") {
            try knows(natsServers[0], "subd.m.LOOK.>", count: 1)
        }
        // How often the number is found in the bucket depends on timing (2 of 5 rounds here): rounds go on until it
        // was, 30 at most.
        let sends = 300
        func lookedUp() -> Int {
            nodes[0].log.split(separator: "\n").filter {
                $0.contains("read from the numbers bucket before its watch brought it")
            }.count
        }
        var rounds = 0
        for round in 0..<30 where lookedUp() == 0 {
            rounds += 1
            try publisher.send(String(repeating: "SEND LOOK.n\(round) x\n", count: sends))
            XCTAssertEqual(try creator.command("CREATE LOOK.n\(round)"), .ok("created"))
            var found = false
            for index in 0..<sends {
                let reply = try publisher.readReply()
                if reply == .ok("1") {
                    found = true
                } else if !found, case .error(let code, _) = reply, code == "NOTFOUND" {
                    continue
                } else {
                    XCTFail("round \(round), publication \(index): \(reply)")
                }
            }
            XCTAssertTrue(found, "round \(round): the number was found before the last publication")
        }
        print("ClusterPipelineTests: found a number in the bucket after \(rounds) round(s)")
        XCTAssertGreaterThan(lookedUp(), 0, "the case this checks never happened")

        // node3 stopped: each publication waits for the 3 s timeout. Three wait at once (the window): a, b and c run
        // and are delivered before the first answer; d waits for room and runs after it; the PING after every reply.
        let node3 = nodes[2].child.pid
        ChildProcess.stop(pid: node3)
        var continued = false
        defer { if !continued { kill(node3, SIGCONT) } }
        try publisher.send("SEND PIPE.N a\nSEND PIPE.N b\nSEND PIPE.N c\nSEND PIPE.N d\nPING\n")
        XCTAssertEqual(try publisher.readReply(), .ok("2"), "a: node1's and node2's; node3 did not answer")
        XCTAssertEqual(
            publisher.takePushes().compactMap { $0.message.map { String(decoding: $0.payload, as: UTF8.self) } },
            ["a", "b", "c"], "three publications in flight before the first answer, not the fourth")
        for name in ["b", "c", "d"] { XCTAssertEqual(try publisher.readReply(), .ok("2"), name) }
        XCTAssertEqual(try publisher.readReply(), .status("PONG"))
        XCTAssertEqual(try publisher.nextMessage().payload, Array("d".utf8))

        // A client that sends and closes its side at once still gets its replies: the end of its input waits for
        // them.
        let leaving = try connect(nodes[0], "client that shuts down its write side", timeout: 20)
        try leaving.send("SEND PIPE.N e\nSEND PIPE.N f\n")
        try leaving.shutdownWrite()
        XCTAssertEqual(try leaving.readReply(), .ok("2"))
        XCTAssertEqual(try leaving.readReply(), .ok("2"))
        XCTAssertEqual(try stats(publisher)["cluster_ack_timeouts"], "6")

        XCTAssertEqual(kill(node3, SIGCONT), 0)
        continued = true
        for name in ["a", "b", "c", "d", "e", "f"] {
            XCTAssertEqual(try onNode3.nextMessage().payload, Array(name.utf8), "node3 delivers after its stop")
        }
        try eventually("node3's six confirmations, after the answers, are counted late") {
            try stats(publisher)["cluster_late_acks"] == "6"
        }
        XCTAssertEqual(try publisher.command("SEND PIPE.N again"), .ok("3"), "node3 answers again")

        // node1 told to stop while a reply is in flight (node3 stopped again): the reply still goes out, after its
        // timeout, before the connection closes.
        ChildProcess.stop(pid: node3)
        continued = false
        try publisher.send("SEND PIPE.N last\n")
        for name in ["a", "b", "c", "d", "e", "f", "again", "last"] {
            XCTAssertEqual(try onNode2.nextMessage().payload, Array(name.utf8))
        }
        XCTAssertEqual(kill(nodes[0].child.pid, SIGTERM), 0)
        XCTAssertEqual(try publisher.readReply(), .ok("2"), "answered during the drain")
        try publisher.expectClosed(discardingData: true)
    }
}
