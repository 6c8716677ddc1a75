import SubscriptionWire
import XCTest

@testable import SubscriptionClient

/// Info pairs through the client (protocol 1.1): sent on `PUB` after checking, received on `MSG` apart from the
/// server's own keys.
final class InfoPairClientTests: XCTestCase {
    func testPublishSendsThePairsInOrder() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let info = [
            InfoPair(key: "unit", value: "EUR"), InfoPair(key: "price", value: "12"),
            InfoPair(key: "note", value: InfoPair.percentEncoded("a b")),
        ]
        let receivers = Task { try await client.publish("SCIENCE", text: "V1.0", info: info) }
        try await peer.expectLine("PUB SCIENCE 4 unit=EUR price=12 note=a%20b")
        let frame = try await peer.readBytes(5)
        XCTAssertEqual(frame, Array("V1.0\n".utf8))
        peer.send("+OK 2\n")
        let count = try await receivers.value
        XCTAssertEqual(count, 2)
    }

    func testBatchCarriesThePairsOnEveryMessage() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let receivers = Task {
            try await client.publish("X", batch: [[0x61], [0x62]], info: [InfoPair(key: "k", value: "v")])
        }
        for byte in [UInt8(ascii: "a"), UInt8(ascii: "b")] {
            try await peer.expectLine("PUB X 1 k=v")
            let frame = try await peer.readBytes(2)
            XCTAssertEqual(frame, [byte, 0x0A])
        }
        peer.send("+OK 1\n+OK 1\n")
        let counts = try await receivers.value
        XCTAssertEqual(counts, [1, 1])
    }

    /// A bad pair is refused with the info-pair problem, and nothing reaches the server.
    func testInvalidPairsAreRefusedBeforeSending() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let cases: [([InfoPair], InfoPair.Problem)] = [
            ([InfoPair(key: "from", value: "me")], .reservedKey("from")),
            ([InfoPair(key: "1x", value: "v")], .badKey),
            ([InfoPair(key: "k", value: "a b")], .badValue),
            ([InfoPair(key: "k", value: "")], .badValue),
            ([InfoPair(key: "k", value: "1"), InfoPair(key: "k", value: "2")], .duplicateKey("k")),
            ((1...17).map { InfoPair(key: "k\($0)", value: "v") }, .tooMany(17)),
        ]
        // Were a refused PUB sent, it would wait for a reply: the hang-up ends such waits, so the test fails instead
        // of hanging.
        let attempts = cases.map { info, _ in Task { try await client.publish("X", text: "x", info: info) } }
        let pinged = Task { try await client.ping() }
        let first = try await peer.readLine()
        XCTAssertEqual(first, "PING", "the server sees nothing before the PING")
        peer.send("+PONG\n")
        peer.hangUp()
        _ = try await pinged.value
        for (attempt, (_, problem)) in zip(attempts, cases) {
            await assertThrowsClientError(try await attempt.value, .invalidInfo(problem))
        }
    }

    func testReceivedMessageExposesThePairs() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let subscribed = Task { try await client.subscribe(["SCIENCE"]) }
        try await peer.expectLine("SUB SCIENCE")
        peer.send("+OK\nMSG SCIENCE 4 from=lab $seq=9 unit=EUR price=12\nV1.0\nGONE SCIENCE\n")
        var messages: [ReceivedMessage] = []
        for try await event in try await subscribed.value {
            if case .message(let message) = event { messages.append(message) }
        }
        XCTAssertEqual(messages.count, 1)
        XCTAssertEqual(messages.first?.from, "lab")
        XCTAssertEqual(messages.first?.info, ["unit": "EUR", "price": "12"])
        XCTAssertEqual(
            messages.first?.infoPairs, [InfoPair(key: "unit", value: "EUR"), InfoPair(key: "price", value: "12")])
    }
}
