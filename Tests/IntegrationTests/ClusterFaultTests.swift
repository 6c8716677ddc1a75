import Foundation
import TestSupport
import XCTest

/// A NATS server killed under load (issue 23, item 5; docs/CLUSTER.md, "Failure cases", "The fault test"): three
/// clustered `nats-server`s and three subd nodes (`ack: all`), a plain and a retained publisher on every node
/// streaming, and the server that leads the `subd_retained` stream killed with SIGKILL mid-stream; the publishers go
/// on through the leader election. Proves, once it settled:
/// - retained numbers (step 5): no node delivers a revision twice or out of order; every node gives a revision the
///   same payload; a publication refused with `-ERR LIMIT` is delivered nowhere, except one whose write went
///   unanswered (`the cluster did not answer in time`: it may have been stored, and then it is a revision like any
///   other); every node whose NATS connection stayed up delivers every revision, so every `+OK`; the node that lost
///   its server ("During the gap", "Caught up") misses no revision written after it caught up again, and delivers
///   the last; `GET` answers the last revision and its payload on every node;
/// - plain numbers: each subscriber gets each publication at most once, each publisher's in its order, its own
///   node's publications all; every `+OK <n>` (step 4) is at most the subscribers that got that publication.
final class ClusterFaultTests: ClusterTestCase {
    private static let retainedNumbers = ["F.R1", "F.R2"]
    private static let plainNumber = "F.PLAIN"

    func testKillingTheRetainedLeadersServerLosesNoRevisionAndOverCountsNoReceiver() throws {
        let nodes = try startCluster { _ in ["  ack: all"] }
        let creator = try connect(nodes[0], "creator on node1")
        for number in Self.retainedNumbers {
            XCTAssertEqual(try creator.command("CREATE \(number) retain"), .ok("created"))
        }
        XCTAssertEqual(try creator.command("CREATE \(Self.plainNumber)"), .ok("created"))

        // Subscribers: one of both retained numbers per node; one of the plain number per node, two on node2.
        var retainedSubscribers: [(node: Int, client: LineClient)] = []
        var plainSubscribers: [(node: Int, client: LineClient)] = []
        var checkers: [LineClient] = []
        for (index, node) in nodes.enumerated() {
            let retained = try connect(node, "retained subscriber on node\(index + 1)")
            for number in Self.retainedNumbers {
                try eventually("node\(index + 1) knows \(number)", timeout: 10) {
                    try retained.command("SUB \(number)") == .ok()
                }
            }
            retainedSubscribers.append((index, retained))
            for copy in 0..<(index == 1 ? 2 : 1) {
                let plain = try connect(node, "plain subscriber \(copy + 1) on node\(index + 1)")
                try eventually("node\(index + 1) knows \(Self.plainNumber)", timeout: 10) {
                    try plain.command("SUB \(Self.plainNumber)") == .ok()
                }
                plainSubscribers.append((index, plain))
            }
            checkers.append(try connect(node, "checker on node\(index + 1)"))
        }
        for server in natsServers {
            try eventually("every node's interest reached \(server.configuration.name)", timeout: 10) {
                try knows(server, "subd.m.\(Self.plainNumber)", count: 2)
            }
        }

        // The stream: on each node a plain and a retained publisher, each on a thread of its own.
        let ledger = Ledger()
        let done = DispatchGroup()
        for (index, node) in nodes.enumerated() {
            for retained in [false, true] {
                let name = "\(retained ? "r" : "p")\(index + 1)"
                let client = try connect(node, "publisher \(name) on node\(index + 1)", timeout: 15)
                done.enter()
                let thread = Thread {
                    defer { done.leave() }
                    Self.stream(client, name: name, node: index, retained: retained, into: ledger)
                }
                thread.start()
            }
        }
        defer {
            ledger.stop()
            done.wait()
        }
        try eventually("every publisher was answered +OK 10 times") {
            ledger.okCounts(afterKill: false).values.allSatisfy { $0 >= 10 }
                && ledger.okCounts(afterKill: false).count == 6
        }

        // Kill the server that leads the retained bucket's stream, mid-stream.
        var leader: Int?
        try eventually("a server names the retained stream's leader", timeout: 10) {
            leader = try retainedStreamLeader()
            return leader != nil
        }
        let killed = try XCTUnwrap(leader)
        let cut = try nodesConnected(to: natsServers[killed])
        XCTAssertFalse(cut.isEmpty, "some node is connected to \(natsServers[killed].configuration.name)")
        let lostBefore = Dictionary(uniqueKeysWithValues: cut.map { ($0, lostCount(nodes[$0])) })
        ledger.markKill()
        natsServers[killed].kill()

        // The publications go on through the election, on every node (the cut ones once they reconnected).
        // Meanwhile, the revision each cut node's GET first answers (once it caught up again, "Caught up"): every
        // revision after it was stored after the node caught up, so the node must deliver it.
        var caughtUpAt: [Int: [String: Int]] = [:]
        try eventually("every publisher was answered +OK 5 times after the kill, the cut nodes caught up", timeout: 40)
        {
            for node in cut where lostCount(nodes[node]) > lostBefore[node] ?? 0 {
                for number in Self.retainedNumbers where caughtUpAt[node]?[number] == nil {
                    let (value, reply) = try get(checkers[node], number)
                    guard reply.errorCode == nil, let revision = value.flatMap({ Int($0.prefix { $0 != " " }) })
                    else { continue }
                    caughtUpAt[node, default: [:]][number] = revision
                }
            }
            let counts = ledger.okCounts(afterKill: true)
            return counts.count == 6 && counts.values.allSatisfy { $0 >= 5 }
                && cut.allSatisfy { caughtUpAt[$0]?.count == Self.retainedNumbers.count }
        }
        ledger.stop()
        done.wait()
        XCTAssertEqual(ledger.failures, [], "every publisher's connection answered")

        // Settled: every node caught up and answers the same last value of each retained number.
        var finals: [String: String] = [:]
        try eventually("every node answers the same last value of each retained number") {
            for number in Self.retainedNumbers {
                var answers: [String] = []
                for checker in checkers {
                    let (value, reply) = try get(checker, number)
                    guard let value, reply == .ok(String(value.prefix { $0 != " " })) else { return false }
                    answers.append(value)
                }
                guard Set(answers).count == 1 else { return false }
                finals[number] = answers[0]
            }
            return true
        }

        let attempts = ledger.attempts
        print("fault test: \(Self.summary(attempts, killed: natsServers[killed].configuration.name, cut: cut))")
        print("fault test: gaps in the live retained writes, read from the bucket, per node: \(nodes.map(gapsFound))")
        try checkRetained(retainedSubscribers, attempts, caughtUpAt: caughtUpAt, finals: finals)
        try checkPlain(plainSubscribers, attempts, publishers: nodes.map { try connect($0, "end publisher") })
    }

    // MARK: The stream

    /// Publishes to `client` until `ledger` says stop: the plain number, or the retained numbers in turn; each
    /// payload is `<name>-<index>` (unique), each answer recorded. Pauses a little after each answer (longer after a
    /// refusal) to keep the stream's size bounded on two cores.
    private static func stream(_ client: LineClient, name: String, node: Int, retained: Bool, into ledger: Ledger) {
        var index = 0
        while !ledger.isStopped {
            index += 1
            let number = retained ? retainedNumbers[index % retainedNumbers.count] : plainNumber
            let payload = "\(name)-\(index)"
            let afterKill = ledger.isAfterKill
            do {
                let reply = try client.pub(number, Array(payload.utf8))
                ledger.record(
                    Attempt(
                        publisher: name, node: node, number: number, payload: payload, reply: reply,
                        afterKill: afterKill))
                usleep(reply.errorCode != nil ? 20_000 : retained ? 3_000 : 10_000)
            } catch {
                ledger.failed("\(name): \(error)")
                return
            }
        }
    }

    // MARK: The checks

    /// One line for the test's output: which server was killed, which nodes were cut, and per kind of number the
    /// answers before and after the kill (`+OK` and refusals, with the refusals' texts).
    private static func summary(_ attempts: [Attempt], killed: String, cut: Set<Int>) -> String {
        var parts = ["killed \(killed)", "cut node(s) \(cut.map { "node\($0 + 1)" }.sorted())"]
        for retained in [false, true] {
            for afterKill in [false, true] {
                let some = attempts.filter { $0.publisher.hasPrefix(retained ? "r" : "p") && $0.afterKill == afterKill }
                let refused = some.compactMap { attempt -> String? in
                    guard case .error(_, let message) = attempt.reply else { return nil }
                    return message
                }
                let texts = Set(refused.map { String($0.prefix(60)) }).sorted()
                parts.append(
                    "\(retained ? "retained" : "plain") \(afterKill ? "after" : "before"): "
                        + "\(some.count - refused.count) +OK, \(refused.count) -ERR \(texts)")
            }
        }
        return parts.joined(separator: "; ")
    }

    /// The retained numbers' deliveries against the publishers' answers.
    private func checkRetained(
        _ subscribers: [(node: Int, client: LineClient)], _ attempts: [Attempt], caughtUpAt: [Int: [String: Int]],
        finals: [String: String]
    ) throws {
        let deliveries = try subscribers.map {
            ($0.node, $0.client, try $0.client.pushesBeforePing().compactMap(\.message))
        }
        for number in Self.retainedNumbers {
            let mine = attempts.filter { $0.number == number }
            let accepted = Set(mine.filter { $0.reply.errorCode == nil }.map(\.payload))
            // A write whose answer did not come in time may have been stored (its reply says so); any other refusal
            // changed nothing.
            let refused = Set(mine.filter { $0.reply.errorCode != nil && !$0.isUnanswered }.map(\.payload))
            var payloadOf: [Int: String] = [:]
            var revisionOf: [String: Int] = [:]
            var seenBy: [(node: Int, revisions: [Int])] = []
            for (node, subscriber, messages) in deliveries {
                var revisions: [Int] = []
                for message in messages where message.number == number {
                    guard let revision = message.attributes["rev"].flatMap({ Int($0) }) else {
                        XCTFail("\(subscriber.label): no rev= in \(message)")
                        continue
                    }
                    XCTAssertGreaterThan(
                        revision, revisions.last ?? 0, "\(subscriber.label): \(number) revisions rise, no repeat")
                    revisions.append(revision)
                    let payload = message.text
                    XCTAssertFalse(refused.contains(payload), "\(number) \(payload) was refused, yet delivered")
                    if let known = payloadOf[revision] {
                        XCTAssertEqual(payload, known, "\(subscriber.label): \(number) rev \(revision)'s payload")
                    }
                    payloadOf[revision] = payload
                    if let known = revisionOf[payload] {
                        XCTAssertEqual(revision, known, "\(number) \(payload) delivered at two revisions")
                    }
                    revisionOf[payload] = revision
                }
                seenBy.append((node, revisions))
            }
            let stored = mine.filter { $0.isUnanswered && revisionOf[$0.payload] != nil }.map(\.payload)
            print("fault test: \(number): \(stored.count) write(s) answered 'did not answer in time' stored \(stored)")
            let last = payloadOf.keys.max() ?? 0
            XCTAssertEqual(finals[number], "\(last) \(payloadOf[last] ?? "?")", "GET answers \(number)'s last value")
            XCTAssertEqual(Set(payloadOf.keys), Set(1...max(last, 1)), "\(number): every revision delivered somewhere")
            for payload in accepted {
                XCTAssertNotNil(revisionOf[payload], "\(number) \(payload) was answered +OK, delivered nowhere")
            }
            // A publisher's accepted writes to one number keep its order.
            for publisher in Set(mine.map(\.publisher)) {
                let revisions = mine.filter { $0.publisher == publisher && accepted.contains($0.payload) }
                    .compactMap { revisionOf[$0.payload] }
                XCTAssertEqual(revisions, revisions.sorted(), "\(publisher)'s writes to \(number) keep its order")
            }
            for (node, revisions) in seenBy {
                let missed = Set(1...max(last, 1)).subtracting(revisions).sorted()
                if let caughtUp = caughtUpAt[node]?[number] {
                    // Away from NATS for a while: it may miss what was written before it caught up again, no more.
                    let late = missed.filter { $0 > caughtUp }
                    XCTAssertEqual(
                        late, [],
                        "node\(node + 1) (cut, caught up at \(number) rev \(caughtUp)) missed revisions written after; "
                            + "delivered \(revisions.filter { $0 >= caughtUp - 3 }.prefix(12))")
                    XCTAssertEqual(revisions.last, last, "node\(node + 1) (cut) delivered \(number)'s last revision")
                } else {
                    XCTAssertEqual(missed, [], "node\(node + 1) (connected all along) delivered all of \(number)")
                }
            }
            // `+OK <n>` of a retained number counts every node's receivers (`ack: all`): at most the subscribers, on
            // any node, that got that revision.
            for attempt in mine {
                guard case .status(let text) = attempt.reply, let count = Int(text.dropFirst(3)) else { continue }
                let revision = revisionOf[attempt.payload] ?? 0
                let got = seenBy.filter { $0.revisions.contains(revision) }.count
                XCTAssertLessThanOrEqual(count, got, "\(attempt.payload): +OK at most the receivers of its revision")
            }
            let counts = mine.compactMap { attempt -> Int? in
                guard case .status(let text) = attempt.reply else { return nil }
                return Int(text.dropFirst(3))
            }
            XCTAssertTrue(counts.contains { $0 > 1 }, "\(number): some +OK counted other nodes' receivers")
        }
    }

    /// The plain number's deliveries against the publishers' `+OK <n>`. First each node publishes an end marker,
    /// again until every subscriber has one from every node (one origin's publications arrive in order, so after it
    /// nothing more of that node's comes).
    private func checkPlain(
        _ subscribers: [(node: Int, client: LineClient)], _ attempts: [Attempt], publishers: [LineClient]
    ) throws {
        var received: [[String]] = Array(repeating: [], count: subscribers.count)
        var round = 0
        try eventually("every plain subscriber has every node's end marker") {
            round += 1
            for (index, publisher) in publishers.enumerated() {
                _ = try publisher.pub(Self.plainNumber, Array("end\(index + 1)-\(round)".utf8))
            }
            for (index, subscriber) in subscribers.enumerated() {
                received[index] += try subscriber.client.pushesBeforePing().compactMap(\.message).map(\.text)
            }
            return received.allSatisfy { payloads in
                (1...publishers.count).allSatisfy { node in payloads.contains { $0.hasPrefix("end\(node)-") } }
            }
        }
        var receivers: [String: Int] = [:]
        for (index, (node, subscriber)) in subscribers.enumerated() {
            let payloads = received[index].filter { !$0.hasPrefix("end") }
            XCTAssertEqual(Set(payloads).count, payloads.count, "\(subscriber.label): each publication at most once")
            for publisher in 1...publishers.count {
                let indexes = payloads.filter { $0.hasPrefix("p\(publisher)-") }.compactMap { Int($0.dropFirst(3)) }
                XCTAssertEqual(indexes, indexes.sorted(), "\(subscriber.label): p\(publisher)'s order")
            }
            let own = attempts.filter { $0.number == Self.plainNumber && $0.node == node && $0.reply.errorCode == nil }
            XCTAssertEqual(
                Set(own.map(\.payload)).subtracting(payloads), [], "\(subscriber.label): its node's publications")
            for payload in payloads { receivers[payload, default: 0] += 1 }
        }
        var counted = 0
        for attempt in attempts where attempt.number == Self.plainNumber {
            guard case .status(let text) = attempt.reply, let count = Int(text.dropFirst(3)) else {
                XCTFail("\(attempt.payload): answered \(attempt.reply)")
                continue
            }
            XCTAssertLessThanOrEqual(
                count, receivers[attempt.payload] ?? 0, "\(attempt.payload): +OK at most its receivers")
            if count > 2 { counted += 1 }
        }
        XCTAssertGreaterThan(counted, 0, "some +OK counted other nodes' receivers")
    }

    // MARK: The NATS servers

    /// The index of the server that leads the `subd_retained` stream (`KV_subd_retained`), as some running server's
    /// `/jsz?accounts=true&streams=true` names it; nil while none does (an election).
    private func retainedStreamLeader() throws -> Int? {
        for server in natsServers where server.process.isRunning {
            let jsz = try server.monitoring("/jsz?accounts=true&streams=true")
            for account in jsz["account_details"] as? [[String: Any]] ?? [] {
                for stream in account["stream_detail"] as? [[String: Any]] ?? [] {
                    guard stream["name"] as? String == "KV_subd_retained",
                        let cluster = stream["cluster"] as? [String: Any], let name = cluster["leader"] as? String,
                        let index = natsServers.firstIndex(where: { $0.configuration.name == name })
                    else { continue }
                    return index
                }
            }
        }
        return nil
    }

    /// The gaps in the retained bucket's live writes that `node` read from the bucket, as its last caught-up line says.
    private func gapsFound(_ node: Daemon) -> Int {
        guard let line = node.log.split(separator: "\n").last(where: { $0.contains("retained values caught up") }),
            let count = line.range(of: "so far: ")
        else { return 0 }
        return Int(line[count.upperBound...].prefix { $0.isNumber }) ?? 0
    }

    /// How many times `node` logged that it lost its NATS connection.
    private func lostCount(_ node: Daemon) -> Int {
        node.log.components(separatedBy: "cluster: lost NATS").count - 1
    }

    /// The nodes (0-based) whose NATS connection is to `server` (`/connz`, connections named `subd node<k>`).
    private func nodesConnected(to server: NATSServerProcess) throws -> Set<Int> {
        let connections = try server.monitoring("/connz")["connections"] as? [[String: Any]] ?? []
        return Set(
            connections.compactMap { connection in
                (connection["name"] as? String).flatMap { name in
                    name.hasPrefix("subd node") ? Int(name.dropFirst(9)).map { $0 - 1 } : nil
                }
            })
    }
}

/// One publication and its answer.
private struct Attempt {
    var publisher: String
    var node: Int
    var number: String
    var payload: String
    var reply: Reply
    var afterKill: Bool

    /// A write answered `-ERR LIMIT the cluster did not answer in time`: it may have been stored all the same.
    var isUnanswered: Bool {
        guard case .error("LIMIT", let message) = reply else { return false }
        return message.hasPrefix("the cluster did not answer in time")
    }
}

/// What the publishing threads share with the test: their answers, whether the server was killed, when to stop.
private final class Ledger: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [Attempt] = []
    private var failedPublishers: [String] = []
    private var stopped = false
    private var killed = false

    var attempts: [Attempt] { lock.withLock { recorded } }
    var failures: [String] { lock.withLock { failedPublishers } }
    var isStopped: Bool { lock.withLock { stopped } }
    var isAfterKill: Bool { lock.withLock { killed } }

    func record(_ attempt: Attempt) { lock.withLock { recorded.append(attempt) } }
    func failed(_ why: String) { lock.withLock { failedPublishers.append(why) } }
    func stop() { lock.withLock { stopped = true } }
    func markKill() { lock.withLock { killed = true } }

    /// Each publisher's `+OK` answers, of publications begun before the kill or after it.
    func okCounts(afterKill: Bool) -> [String: Int] {
        lock.withLock {
            var counts: [String: Int] = [:]
            for attempt in recorded where attempt.afterKill == afterKill && attempt.reply.errorCode == nil {
                counts[attempt.publisher, default: 0] += 1
            }
            return counts
        }
    }
}
