import XCTest

@testable import SubscriptionNATS

/// PING and PONG both ways, against a scripted server that can fall silent.
final class NATSLivenessTests: NATSTestCase {
    func testTheClientAnswersPingsAndReplacesAConnectionWhosePingsGoUnanswered() throws {
        let server = try ScriptedNATSServer()
        let options = NATSClientOptions(
            name: "node-a", echo: false, authentication: .user("node", password: "secret"),
            reconnectWait: .seconds(30), pingInterval: .seconds(1), maxPingsOutstanding: 1)
        let client = try makeClient(["127.0.0.1:\(server.port)"], options: options)
        try server.accept()
        server.send(
            #"INFO {"server_id":"FAKE","version":"2.9.10","headers":true,"max_payload":1024,"auth_required":true}"#
                + "\r\n")
        let handshake = try server.read(until: "PING\r\n")
        XCTAssertTrue(handshake.hasPrefix("CONNECT {"), handshake)
        for field in [
            #""echo":false"#, #""verbose":false"#, #""headers":true"#, #""user":"node""#, #""pass":"secret""#,
            #""name":"node-a""#,
        ] {
            XCTAssertTrue(handshake.contains(field), "\(field) in \(handshake)")
        }
        server.send("PONG\r\n")
        XCTAssertNotNil(client.statuses.wait(for: isConnected))

        // The server's PING is answered (a liveness PING of the client's may come first: the timer runs). The
        // interval (1 s) leaves the client one to two seconds after the handshake before its second unanswered tick
        // closes the connection: room for this exchange on a loaded machine.
        server.send("PING\r\n")
        let answer = try server.read(until: "PONG\r\n")
        XCTAssertTrue(answer == "PONG\r\n" || answer == "PING\r\nPONG\r\n", answer)
        // Liveness: a PING every second, none answered; with one outstanding, the next is one too many.
        XCTAssertNotNil(
            client.statuses.wait(for: { $0 == .disconnected(reason: .staleConnection) }, timeout: 20),
            "\(client.statuses.all)")
        XCTAssertTrue(server.clientClosed())
    }

    func testAnErrorOnceConnectedIsReportedAndAnUnreadableFrameEndsTheConnection() throws {
        let server = try ScriptedNATSServer()
        let client = try makeClient(["127.0.0.1:\(server.port)"])
        try server.accept()
        server.send(#"INFO {"server_id":"FAKE","max_payload":1024}"# + "\r\n")
        _ = try server.read(until: "PING\r\n")
        server.send("PONG\r\n")
        XCTAssertNotNil(client.statuses.wait(for: isConnected))
        server.send("-ERR 'Permissions Violation for Publish to \"x\"'\r\n")
        XCTAssertNotNil(client.errors.wait(for: { $0 == .serverError("Permissions Violation for Publish to \"x\"") }))
        // A frame the client cannot read ends the connection.
        server.send("BOGUS\r\n")
        XCTAssertNotNil(
            client.statuses.wait(for: {
                $0 == .disconnected(reason: .protocolError(.unknownOperation("BOGUS")))
            }), "\(client.statuses.all)")
        XCTAssertTrue(server.clientClosed())
    }
}
