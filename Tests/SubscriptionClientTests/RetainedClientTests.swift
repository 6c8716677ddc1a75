import SubscriptionWire
import XCTest

@testable import SubscriptionClient

/// Retained numbers through the client (protocol 1.1): `CREATE ... retain`, `GET`, `LIST ... kind`, against a scripted
/// server.
final class RetainedClientTests: XCTestCase {
    func testCreateRetainedSendsRetain() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let created = Task { try await client.create("PRICE", retained: true) }
        try await peer.expectLine("CREATE PRICE retain")
        peer.send("+OK created\n")
        let first = try await created.value
        XCTAssertTrue(first)
        let again = Task { try await client.create("PRICE", retained: true) }
        try await peer.expectLine("CREATE PRICE retain")
        peer.send("+OK exists\n")
        let second = try await again.value
        XCTAssertFalse(second, "an existing number: +OK exists")
        let plain = Task { try await client.create("PLAIN") }
        try await peer.expectLine("CREATE PLAIN")
        peer.send("+OK created\n")
        _ = try await plain.value
    }

    func testGetReturnsThePushedValue() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let got = Task { try await client.get("PRICE") }
        try await peer.expectLine("GET PRICE")
        peer.send("MSG PRICE 4 from=lab rev=3 unit=EUR price=12\nV1.0\n+OK 3\n")
        let value = try await got.value
        XCTAssertEqual(
            value,
            RetainedValue(
                number: "PRICE", payload: Array("V1.0".utf8), revision: 3, from: "lab",
                info: [InfoPair(key: "unit", value: "EUR"), InfoPair(key: "price", value: "12")]))
        XCTAssertEqual(value?.text, "V1.0")
        XCTAssertEqual(value?.info, ["unit": "EUR", "price": "12"])
    }

    func testGetOfANumberWithNothingPublishedIsNil() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let got = Task { try await client.get("EMPTY") }
        try await peer.expectLine("GET EMPTY")
        peer.send("+OK 0\n")
        let value = try await got.value
        XCTAssertNil(value)
    }

    func testGetRefusalsAreTheServersCodes() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let missing = Task { try await client.get("NOPE") }
        try await peer.expectLine("GET NOPE")
        peer.send("-ERR NOTFOUND no subscription number 'NOPE' (CREATE it first)\n")
        await assertThrowsClientError(
            try await missing.value,
            .server(code: .notFound, message: "no subscription number 'NOPE' (CREATE it first)"))
        let plain = Task { try await client.get("PLAIN") }
        try await peer.expectLine("GET PLAIN")
        peer.send("-ERR PROTO 'PLAIN' is not a retained number\n")
        await assertThrowsClientError(
            try await plain.value, .server(code: .proto, message: "'PLAIN' is not a retained number"))
        await assertThrowsClientError(try await client.get("A.*"), .invalidName("A.*", .wildcardInNumber))
    }

    func testGetAnsweredWithoutItsValueIsAViolation() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let got = Task { try await client.get("X") }
        try await peer.expectLine("GET X")
        peer.send("+OK 3\n")
        await assertThrowsClientError(
            try await got.value, .protocolViolation("GET X was answered '+OK 3' without the value"))
    }

    /// The push that answers a GET is not a publication: a subscription to the same number gets each publication
    /// once, also one with the revision the GET names that came right before the GET's own push.
    func testGetAnswerIsNotDeliveredToSubscriptions() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let subscribed = Task { try await client.subscribe(["X", "Y"]) }
        try await peer.expectLine("SUB X")
        try await peer.expectLine("SUB Y")
        peer.send("+OK\n+OK\n")
        let subscription = try await subscribed.value
        let got = Task { try await client.get("X") }
        try await peer.expectLine("GET X")
        // rev 4 and 5 published while the GET waits (5 twice: once published, once the GET's answer), a message to
        // Y in between, then rev 6 after the reply.
        peer.send("MSG X 2 rev=4\nv4\nMSG X 2 rev=5\nv5\nMSG Y 1\ny\nMSG X 2 rev=5\nv5\n+OK 5\nMSG X 2 rev=6\nv6\n")
        peer.send("GONE X\nGONE Y\n")
        let value = try await got.value
        XCTAssertEqual(value?.revision, 5)
        XCTAssertEqual(value?.text, "v5")
        var received: [String] = []
        for try await event in subscription {
            if case .message(let message) = event { received.append("\(message.number):\(message.text ?? "?")") }
        }
        XCTAssertEqual(received, ["X:v4", "X:v5", "Y:y", "X:v6"])
    }

    /// A push of the number that is not followed by the GET's reply (or names another revision) is a publication.
    func testPushBeforeAnotherRevisionIsDelivered() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let subscribed = Task { try await client.subscribe(["X"]) }
        try await peer.expectLine("SUB X")
        peer.send("+OK\n")
        let subscription = try await subscribed.value
        let got = Task { try await client.get("X") }
        try await peer.expectLine("GET X")
        peer.send("MSG X 2 rev=7\nv7\n+OK 0\nGONE X\n")
        let value = try await got.value
        XCTAssertNil(value, "+OK 0: nothing published, whatever came before")
        var received: [Int?] = []
        for try await event in subscription {
            if case .message(let message) = event { received.append(message.revision) }
        }
        XCTAssertEqual(received, [7])
    }

    func testListKindsParsesBothKinds() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let all = Task { try await client.listKinds() }
        try await peer.expectLine("LIST > kind")
        peer.send("*3\nA 1 plain\nPRICE 2 retained 7\nNEW 0 retained 0\n")
        let entries = try await all.value
        XCTAssertEqual(
            entries,
            [
                NumberListing(number: "A", subscribers: 1, kind: .plain),
                NumberListing(number: "PRICE", subscribers: 2, kind: .retained(revision: 7)),
                NumberListing(number: "NEW", subscribers: 0, kind: .retained(revision: 0)),
            ])
        let some = Task { try await client.listKinds("A.>") }
        try await peer.expectLine("LIST A.> kind")
        peer.send("*0\n")
        let none = try await some.value
        XCTAssertEqual(none, [])
        let bad = Task { try await client.listKinds() }
        try await peer.expectLine("LIST > kind")
        peer.send("*1\nA 1\n")
        await assertThrowsClientError(try await bad.value, .protocolViolation("bad LIST ... kind line 'A 1'"))
    }

    func testListingLines() {
        XCTAssertEqual(NumberListing(line: "A.b 3 plain"), NumberListing(number: "A.b", subscribers: 3, kind: .plain))
        XCTAssertEqual(
            NumberListing(line: "P 0 retained 12"),
            NumberListing(number: "P", subscribers: 0, kind: .retained(revision: 12)))
        for bad in [
            "A 1", "A 1 plain 3", "A 1 retained", "A x plain", "A -1 plain", "A +1 plain", "A 1 retained -2",
            "A 1 kept 2", "A  1 plain", " 1 plain", "A 1 retained 1 2",
        ] {
            XCTAssertNil(NumberListing(line: bad), bad)
        }
    }
}
