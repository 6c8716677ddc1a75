import SubscriptionWire
import XCTest

@testable import SubscriptionClient

/// Queue groups through the client (protocol 1.1): `SUB <pattern> group=<name>`, and the routing of `MSG ... group=`.
final class QueueGroupClientTests: XCTestCase {
    func testGroupIsSentAfterFrom() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let subscribed = Task { try await client.subscribe(["JOBS.>"], from: "boss", group: "workers") }
        try await peer.expectLine("SUB JOBS.> from=boss group=workers")
        peer.send("+OK\n")
        let subscription = try await subscribed.value
        XCTAssertEqual(subscription.group, "workers")
        XCTAssertEqual(subscription.from, "boss")
    }

    /// A group subscription gets the messages that came through its group; one without a group gets every message
    /// its patterns match (the session receives each publication once, whichever subscription made it).
    func testGroupSubscriptionGetsOnlyItsGroupsMessages() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let grouped = Task { try await client.subscribe(["JOBS.*"], group: "workers") }
        try await peer.expectLine("SUB JOBS.* group=workers")
        peer.send("+OK\n")
        let group = try await grouped.value
        let plainly = Task { try await client.subscribe(["JOBS.a"]) }
        try await peer.expectLine("SUB JOBS.a")
        peer.send("+OK\n")
        let plain = try await plainly.value
        peer.send("MSG JOBS.a 1 group=workers\n1\nMSG JOBS.a 1\n2\nMSG JOBS.b 1 group=workers\n3\n")
        peer.send("MSG JOBS.b 1 group=others\n4\n")
        peer.send("GONE JOBS.a\n")
        var plainTexts: [String] = []
        for try await event in plain {
            if case .message(let message) = event { plainTexts.append(message.text ?? "?") }
        }
        XCTAssertEqual(plainTexts, ["1", "2"])
        var iterator = group.makeAsyncIterator()
        var groupTexts: [String] = []
        for _ in 0..<2 {
            if case .message(let message)? = try await iterator.next() {
                groupTexts.append(message.text ?? "?")
                XCTAssertEqual(message.group, "workers")
            }
        }
        XCTAssertEqual(groupTexts, ["1", "3"])
    }

    func testInvalidGroupNameIsRefusedBeforeSending() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        for (name, problem) in [
            ("", ClientName.Problem.empty), ("a b", .forbiddenByte(0x20)),
            (String(repeating: "g", count: 65), .tooLong(65)),
        ] {
            await assertThrowsClientError(
                try await client.subscribe(["X"], group: name), .invalidGroupName(name, problem))
        }
        let pinged = Task { try await client.ping() }
        try await peer.expectLine("PING")
        peer.send("+PONG\n")
        _ = try await pinged.value
        XCTAssertEqual(
            ClientError.invalidGroupName("a b", .forbiddenByte(0x20)).description,
            "invalid group name 'a b': it holds a space")
    }

    /// The server keeps one subscription per pattern and session: the same pattern in another group (or none) would
    /// silently change the first one, so the client refuses it.
    func testSamePatternInAnotherGroupIsRefused() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let first = Task { try await client.subscribe(["N"], group: "a") }
        try await peer.expectLine("SUB N group=a")
        peer.send("+OK\n")
        _ = try await first.value
        let refusal = ClientError.invalidArgument(
            "'N' is already subscribed on this connection with another group; use a second connection")
        await assertThrowsClientError(try await client.subscribe(["N"], group: "b"), refusal)
        await assertThrowsClientError(try await client.subscribe(["N"]), refusal)
    }
}
