import TestSupport
import XCTest

@testable import SubscriptionNATS

/// Publish and subscribe against a real nats-server: headers, queue groups, echo, auth, max_payload, requests.
final class NATSPubSubTests: NATSTestCase {
    func testPublicationWithHeadersAndReplySubjectReachesAWildcardSubscription() throws {
        let server = try startServer()
        let subscriber = try connectedClient([server.address], label: "subscriber")
        let publisher = try connectedClient([server.address], label: "publisher")
        let (_, messages) = try subscriber.subscribe("subd.m.SCIENCE.>")
        subscriber.flush()
        let headers: NATSHeaders = ["Subd-From": "lab", "Subd-Info": "unit=EUR price=12"]
        try publisher.sync {
            try $0.publish(
                subject: "subd.m.SCIENCE.physics", replyTo: "subd.ack.a", headers: headers,
                payload: Array("V1.0".utf8))
            try $0.publish(subject: "subd.m.SCIENCE.physics", payload: Array("plain".utf8))
            try $0.publish(subject: "subd.m.OTHER", payload: Array("not for us".utf8))
        }
        publisher.flush()
        let received = try XCTUnwrap(messages.wait(count: 2))
        XCTAssertEqual(received.map(\.subject), ["subd.m.SCIENCE.physics", "subd.m.SCIENCE.physics"])
        XCTAssertEqual(received[0].headers, headers)
        XCTAssertEqual(received[0].replyTo, "subd.ack.a")
        XCTAssertEqual(text(received[0]), "V1.0")
        XCTAssertNil(received[1].headers)
        XCTAssertEqual(text(received[1]), "plain")
        subscriber.flush()
        XCTAssertEqual(messages.all.count, 2)
    }

    func testEachMessageGoesToOneMemberOfAQueueGroupAndToEveryPlainSubscriber() throws {
        let server = try startServer()
        let one = try connectedClient([server.address], label: "one")
        let two = try connectedClient([server.address], label: "two")
        let plain = try connectedClient([server.address], label: "plain")
        let (_, first) = try one.subscribe("jobs.*", queue: "workers")
        let (_, second) = try two.subscribe("jobs.*", queue: "workers")
        let (_, everything) = try plain.subscribe("jobs.*")
        for client in [one, two, plain] { client.flush() }
        for index in 0..<40 { try plain.publish("jobs.resize", "job \(index)") }
        plain.flush()
        XCTAssertEqual(everything.wait(count: 40)?.count, 40)
        let deadline = Date().addingTimeInterval(5)
        while first.all.count + second.all.count < 40 && Date() < deadline { usleep(5_000) }
        one.flush()
        two.flush()
        let shared = (first.all + second.all).map(text)
        XCTAssertEqual(Set(shared), Set((0..<40).map { "job \($0)" }), "every job to exactly one member")
        XCTAssertEqual(shared.count, 40)
        XCTAssertFalse(first.all.isEmpty, "both members get work")
        XCTAssertFalse(second.all.isEmpty, "both members get work")
    }

    func testWithoutEchoTheServerNeverHandsAClientItsOwnPublications() throws {
        let server = try startServer()
        let bridge = try connectedClient([server.address], options: NATSClientOptions(echo: false), label: "bridge")
        let other = try connectedClient([server.address], label: "other")
        let (_, own) = try bridge.subscribe("subd.m.>")
        let (_, seen) = try other.subscribe("subd.m.>")
        bridge.flush()
        other.flush()
        try bridge.publish("subd.m.N", "from the bridge")
        try other.publish("subd.m.N", "from the other")
        bridge.flush()
        other.flush()
        XCTAssertEqual(
            seen.wait(count: 2)?.map(text).sorted(), ["from the bridge", "from the other"], "echo on: its own too")
        XCTAssertEqual(own.wait(count: 1)?.map(text), ["from the other"])
        bridge.flush()
        XCTAssertEqual(own.all.count, 1, "no echo of the bridge's own publication")
    }

    func testTokenAuthentication() throws {
        let server = try startServer(.init(token: "s3cret"))
        let good = try connectedClient([server.address], options: NATSClientOptions(authentication: .token("s3cret")))
        good.flush()
        let inURL = try connectedClient(["nats://s3cret@\(server.address)"], label: "url")
        inURL.flush()
        let bad = try makeClient(
            [server.address], options: NATSClientOptions(authentication: .token("wrong"), maxReconnectAttempts: 1),
            label: "bad")
        XCTAssertNotNil(bad.errors.wait(for: { $0 == .serverError("Authorization Violation") }), "\(bad.errors.all)")
        XCTAssertNotNil(
            bad.statuses.wait(for: { $0 == .closed(reason: .serverError("Authorization Violation")) }),
            "\(bad.statuses.all)")
        XCTAssertFalse(bad.statuses.all.contains(where: isConnected))
    }

    func testUserAndPasswordFromTheServersURL() throws {
        let server = try startServer(.init(user: ("node", "p@ss")))
        let client = try connectedClient(["nats://node:p@ss@\(server.address)"])
        let (_, messages) = try client.subscribe("a")
        client.flush()
        try client.publish("a", "in")
        XCTAssertEqual(messages.wait(count: 1)?.map(text), ["in"])
    }

    func testAMessageOverTheServersMaxPayloadIsRefusedBeforeItIsSent() throws {
        let server = try startServer(.init(maxPayload: 1024))
        let client = try connectedClient([server.address])
        XCTAssertEqual(client.sync { $0.serverInfo?.maxPayload }, 1024)
        let (_, messages) = try client.subscribe("big")
        client.flush()
        XCTAssertThrowsError(
            try client.sync { try $0.publish(subject: "big", payload: [UInt8](repeating: 1, count: 1025)) }
        ) {
            XCTAssertEqual($0 as? NATSError, .payloadTooBig(size: 1025, limit: 1024))
        }
        // Headers count against max_payload too.
        XCTAssertThrowsError(
            try client.sync {
                try $0.publish(subject: "big", headers: ["K": "v"], payload: [UInt8](repeating: 1, count: 1020))
            }
        ) {
            XCTAssertEqual($0 as? NATSError, .payloadTooBig(size: 1020 + 18, limit: 1024))
        }
        try client.sync { try $0.publish(subject: "big", payload: [UInt8](repeating: 2, count: 1024)) }
        XCTAssertEqual(messages.wait(count: 1)?.first?.payload.count, 1024)
        client.flush()
        XCTAssertEqual(client.statuses.all.filter(isConnected).count, 1, "the connection stayed up")
        XCTAssertEqual(client.errors.all, [])
    }

    func testRequestReplyNoRespondersAndTimeout() throws {
        let server = try startServer()
        let responder = try connectedClient([server.address], label: "responder")
        let requester = try connectedClient([server.address], label: "requester")
        try responder.sync { client in
            try client.subscribe(subject: "service.echo") { request in
                guard let replyTo = request.replyTo else { return }
                try? client.publish(subject: replyTo, payload: Array("echo: ".utf8) + request.payload)
            }
            try client.subscribe(subject: "service.silent") { _ in }
        }
        responder.flush()
        let replies = Collector<Result<NATSMessage, NATSError>>()
        requester.sync {
            $0.request(subject: "service.echo", payload: Array("hi".utf8)) { replies.append($0) }
            $0.request(subject: "service.nobody", payload: []) { replies.append($0) }
            $0.request(subject: "service.silent", payload: [], timeout: .milliseconds(200)) { replies.append($0) }
        }
        let results = try XCTUnwrap(replies.wait(count: 3))
        XCTAssertEqual(results.compactMap { try? $0.get() }.map(text), ["echo: hi"])
        XCTAssertTrue(results.contains { if case .failure(.noResponders) = $0 { true } else { false } })
        XCTAssertTrue(results.contains { if case .failure(.timeout) = $0 { true } else { false } })
    }

    func testUnsubscribeNowAndAfterAMaximum() throws {
        let server = try startServer()
        let client = try connectedClient([server.address])
        let (limited, some) = try client.subscribe("n")
        let (ended, none) = try client.subscribe("n")
        client.sync {
            $0.unsubscribe(limited, after: 2)
            $0.unsubscribe(ended)
        }
        for index in 0..<5 { try client.publish("n", "\(index)") }
        client.flush()
        XCTAssertEqual(some.wait(count: 2)?.map(text), ["0", "1"])
        client.flush()
        XCTAssertEqual(some.all.count, 2)
        XCTAssertEqual(none.all.count, 0)
    }

    /// A message that arrived while the client's queue was busy is handled by `readPendingInput()` within the same
    /// turn (the cluster's timeout sweep reads confirmations before answering without them); without it, only once
    /// the queue comes to the socket.
    func testReadPendingInputHandlesWhatArrivedWhileTheQueueWasBusy() throws {
        let (subscriber, publisher, messages) = try subscriberAndPublisher(of: "confirmations")
        for read in [false, true] {
            messages.removeAll()
            let seenInTheTurn: Int = try subscriber.sync { client in
                // The queue is busy here: the message arrives meanwhile, unread.
                try publisher.publish("confirmations", "read=\(read)")
                publisher.flush()
                guard read else {
                    usleep(100_000)
                    return messages.all.count
                }
                // Read what came so far until the message is handled (it crosses nats-server: on a loaded machine
                // that can take more than a moment), all within this one turn.
                let deadline = Date().addingTimeInterval(5)
                repeat {
                    client.readPendingInput()
                    if !messages.all.isEmpty { break }
                    usleep(5_000)
                } while Date() < deadline
                return messages.all.count
            }
            XCTAssertEqual(seenInTheTurn, read ? 1 : 0, "handled within the busy turn: \(read)")
            XCTAssertEqual(messages.wait(count: 1)?.map(text), ["read=\(read)"], "handled once in all")
            subscriber.flush()
            XCTAssertEqual(messages.all.count, 1, "not handled again by the read event")
        }
    }

    /// `flushNow()` writes what was published within the same turn of the client's queue (the cluster sends its
    /// publications and confirmations before the turn's writes to sessions); without it, the write waits for the turn
    /// to end.
    func testFlushNowWritesWithinTheTurn() throws {
        let (subscriber, publisher, messages) = try subscriberAndPublisher(of: "early")
        for now in [false, true] {
            messages.removeAll()
            let seenInTheTurn: Int = try publisher.sync { client in
                try client.publish(subject: "early", payload: Array("now=\(now)".utf8))
                guard now else {
                    usleep(100_000)
                    return messages.all.count
                }
                client.flushNow()
                // It crosses nats-server and the subscriber's queue: on a loaded machine that can take a moment.
                let deadline = Date().addingTimeInterval(5)
                while messages.all.isEmpty && Date() < deadline { usleep(2_000) }
                return messages.all.count
            }
            XCTAssertEqual(seenInTheTurn, now ? 1 : 0, "arrived within the publisher's turn: \(now)")
            XCTAssertEqual(messages.wait(count: 1)?.map(text), ["now=\(now)"], "sent once in all")
            publisher.flush()
            subscriber.flush()
            XCTAssertEqual(messages.all.count, 1, "not sent again at the end of the turn")
        }
    }

    /// Two clients of one nats-server: a subscriber to `subject` (its subscription at the server) and a publisher.
    private func subscriberAndPublisher(of subject: String) throws -> (
        subscriber: TestClient, publisher: TestClient, messages: Collector<NATSMessage>
    ) {
        let server = try startServer()
        let subscriber = try connectedClient([server.address], label: "subscriber")
        let publisher = try connectedClient([server.address], label: "publisher")
        let (_, messages) = try subscriber.subscribe(subject)
        subscriber.flush()
        return (subscriber, publisher, messages)
    }
}
