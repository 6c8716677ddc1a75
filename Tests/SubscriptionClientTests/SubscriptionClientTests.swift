import Dispatch
import Glibc
import SubscriptionSystem
import XCTest

@testable import SubscriptionClient

/// The client against a scripted server on the other end of a socket pair.
final class SubscriptionClientTests: XCTestCase {
    func testHandshakeKeepsTheGreeting() async throws {
        let (client, _) = try await ScriptedPeer.connectedClient(name: "alice")
        XCTAssertEqual(client.greeting, "subd test proto=1 session=1")
    }

    func testRepliesOfPipelinedCommandsGoToTheirCallers() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let names = (0..<20).map { $0 % 3 == 0 ? "NEW\($0)" : "OLD\($0)" }
        let results = Task {
            try await withThrowingTaskGroup(of: (String, Bool).self) { group in
                for name in names {
                    group.addTask { (name, try await client.create(name)) }
                }
                return try await group.reduce(into: [String: Bool]()) { $0[$1.0] = $1.1 }
            }
        }
        var replies = ""
        for _ in names {
            let line = try await peer.readLine()
            XCTAssertTrue(line.hasPrefix("CREATE "), line)
            replies += line.hasPrefix("CREATE NEW") ? "+OK created\n" : "+OK exists\n"
        }
        peer.send(replies)
        let created = try await results.value
        for name in names {
            XCTAssertEqual(created[name], name.hasPrefix("NEW"), name)
        }
    }

    func testPublishBatchIsPipelinedInOrderAndBinarySafe() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let payloads: [[UInt8]] = [Array("one".utf8), [0x0A, 0x00, 0xFF], []]
        let receivers = Task { try await client.publish("X", batch: payloads) }
        for payload in payloads {
            try await peer.expectLine("PUB X \(payload.count)")
            let frame = try await peer.readBytes(payload.count + 1)
            XCTAssertEqual(frame, payload + [0x0A])
        }
        peer.send("+OK 1\n+OK 2\n+OK 3\n")
        let counts = try await receivers.value
        XCTAssertEqual(counts, [1, 2, 3])
    }

    func testServerErrorIsThrown() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let removed = Task { try await client.remove("X") }
        try await peer.expectLine("REMOVE X")
        peer.send("-ERR NOTFOUND no such number 'X'\n")
        do {
            _ = try await removed.value
            XCTFail("no error")
        } catch {
            XCTAssertEqual(error as? ClientError, .server(code: .notFound, message: "no such number 'X'"))
        }
    }

    func testSubscriptionGetsPushesFromBeforeAndAfterItsOK() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let subscribed = Task { try await client.subscribe(["SCIENCE", "NEWS.>"]) }
        try await peer.expectLine("SUB SCIENCE")
        try await peer.expectLine("SUB NEWS.>")
        peer.send("MSG SCIENCE 4\nV1.0\n+OK\n+OK\nMSG NEWS.tech 3 from=bob\nabc\nMSG OTHER 1\nz\nGONE SCIENCE\n")
        let subscription = try await subscribed.value
        var iterator = subscription.makeAsyncIterator()
        let first = try await iterator.next()
        XCTAssertEqual(first, .message(ReceivedMessage(number: "SCIENCE", payload: Array("V1.0".utf8))))
        let second = try await iterator.next()
        XCTAssertEqual(
            second,
            .message(ReceivedMessage(number: "NEWS.tech", payload: Array("abc".utf8), from: "bob")))
        let third = try await iterator.next()
        XCTAssertEqual(third, .gone("SCIENCE"), "OTHER matches no pattern and is dropped")
        peer.hangUp()
        do {
            _ = try await iterator.next()
            XCTFail("the subscription did not end with an error")
        } catch {
            XCTAssertEqual(error, .connectionLost)
        }
    }

    func testSubscriptionEndsWhenItsLastNumberIsGone() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let subscribed = Task { try await client.subscribe(["X"]) }
        try await peer.expectLine("SUB X")
        peer.send("+OK\nGONE X\n")
        var events: [Subscription.Event] = []
        for try await event in try await subscribed.value { events.append(event) }
        XCTAssertEqual(events, [.gone("X")])
    }

    func testFromFilterIsSentAndApplied() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let subscribed = Task { try await client.subscribe(["X"], from: "alice") }
        try await peer.expectLine("SUB X from=alice")
        peer.send("+OK\nMSG X 1 from=bob\nb\nMSG X 1\nn\nMSG X 1 from=alice\na\nGONE X\n")
        var events: [Subscription.Event] = []
        for try await event in try await subscribed.value { events.append(event) }
        XCTAssertEqual(
            events,
            [.message(ReceivedMessage(number: "X", payload: [0x61], from: "alice")), .gone("X")])
    }

    func testRefusedSubscribeGivesBackThePatternsItTook() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let subscribed = Task { try await client.subscribe(["A", "B"]) }
        try await peer.expectLine("SUB A")
        try await peer.expectLine("SUB B")
        peer.send("+OK\n-ERR NOTFOUND no such number 'B'\n")
        do {
            _ = try await subscribed.value
            XCTFail("no error")
        } catch {
            XCTAssertEqual(error as? ClientError, .server(code: .notFound, message: "no such number 'B'"))
        }
        try await peer.expectLine("UNSUB A")
    }

    func testCancelledIterationUnsubscribes() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let subscribed = Task { try await client.subscribe(["X.*"]) }
        try await peer.expectLine("SUB X.*")
        peer.send("+OK\n")
        let subscription = try await subscribed.value
        let listening = Task {
            var count = 0
            for try await _ in subscription { count += 1 }
            return count
        }
        listening.cancel()
        let received = try await listening.value
        XCTAssertEqual(received, 0)
        try await peer.expectLine("UNSUB X.*")
    }

    func testLostConnectionFailsTheWaitingCommandAndLaterOnes() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let created = Task { try await client.create("X") }
        try await peer.expectLine("CREATE X")
        peer.hangUp()
        await assertThrowsClientError(try await created.value, .connectionLost)
        await assertThrowsClientError(try await client.ping(), .connectionLost)
    }

    func testProtocolViolationEndsTheConnection() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let listed = Task { try await client.list() }
        try await peer.expectLine("LIST")
        peer.send("*x\n")
        await assertThrowsClientError(try await listed.value, .protocolViolation("bad list header '*x'"))
        try await peer.expectEnd()
    }

    func testReplyWithNoCommandWaitingIsAViolation() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        peer.send("+OK\n")
        try await peer.expectEnd()
        // Later commands say why the connection ended.
        await assertThrowsClientError(
            try await client.ping(), .protocolViolation("a reply came with no command waiting for one"))
    }

    /// Regression: subd at max_connections answers `-ERR LIMIT` on connect, before any command; the client called
    /// that a protocol violation and the next command "connection lost", instead of the server's refusal.
    func testErrorOnConnectIsTheServersRefusal() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        peer.send("-ERR LIMIT too many connections (max_connections is 1)\n")
        try await peer.expectEnd()
        await assertThrowsClientError(
            try await client.ping(), .server(code: .limit, message: "too many connections (max_connections is 1)"))
    }

    /// The server keeps one from= filter per pattern and session, so a second subscription to the same pattern with
    /// another filter would silently change the first one: the client refuses it.
    func testSamePatternWithAnotherFromFilterIsRefused() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let first = Task { try await client.subscribe(["N"], from: "alice") }
        try await peer.expectLine("SUB N from=alice")
        peer.send("+OK\n")
        _ = try await first.value
        await assertThrowsClientError(
            try await client.subscribe(["N"], from: "bob"),
            .invalidArgument(
                "'N' is already subscribed on this connection with another from= filter; use a second connection"))
    }

    func testListStatsAndPing() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let listed = Task { try await client.list("A.>") }
        try await peer.expectLine("LIST A.>")
        peer.send("*2\nA.b 3\nA.c 0\n")
        let entries = try await listed.value
        XCTAssertEqual(entries.map(\.number), ["A.b", "A.c"])
        XCTAssertEqual(entries.map(\.subscribers), [3, 0])

        let stats = Task { try await client.stats() }
        try await peer.expectLine("STATS")
        peer.send("*2\nversion 0.1.0\nuptime_seconds 5\n")
        let pairs = try await stats.value
        XCTAssertEqual(pairs.map(\.key), ["version", "uptime_seconds"])
        XCTAssertEqual(pairs.map(\.value), ["0.1.0", "5"])

        let pong = Task { try await client.ping() }
        try await peer.expectLine("PING")
        peer.send("+PONG\n")
        let elapsed = try await pong.value
        XCTAssertGreaterThan(elapsed, .zero)
    }

    func testCloseSendsQuitAndEndsSubscriptionsCleanly() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let subscribed = Task { try await client.subscribe(["X"]) }
        try await peer.expectLine("SUB X")
        peer.send("+OK\n")
        let subscription = try await subscribed.value
        let closed = Task { await client.close() }
        try await peer.expectLine("QUIT")
        peer.send("+OK bye\n")
        peer.hangUp()
        await closed.value
        var count = 0
        for try await _ in subscription { count += 1 }
        XCTAssertEqual(count, 0)
        await assertThrowsClientError(try await client.create("Y"), .connectionLost)
    }

    func testHelloRefusalIsThrown() async throws {
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds), 0)
        XCTAssertNoThrow(try Syscall.setNonBlocking(fds[0]))
        let peer = ScriptedPeer(fd: fds[1])
        let socket = fds[0]
        let client = Task {
            try await SubscriptionClient.handshake(socket: socket, endpoint: .unix(path: "p"), hello: Command.ping)
        }
        try await peer.expectLine("PING")
        peer.send("-ERR AUTH token required\n")
        await assertThrowsClientError(try await client.value, .server(code: .auth, message: "token required"))
    }
}

/// Asserts that `expression` throws exactly `expected`.
func assertThrowsClientError<T>(
    _ expression: @autoclosure () async throws -> T,
    _ expected: ClientError,
    file: StaticString = #filePath,
    line: UInt = #line
) async {
    do {
        _ = try await expression()
        XCTFail("no error thrown, expected \(expected)", file: file, line: line)
    } catch {
        XCTAssertEqual(error as? ClientError, expected, file: file, line: line)
    }
}
