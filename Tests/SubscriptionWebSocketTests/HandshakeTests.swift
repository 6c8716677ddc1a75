import XCTest

@testable import SubscriptionWebSocket

/// The opening handshake: RFC 6455's accept key, the 101 answer, and each refusal with its status and response.
final class HandshakeTests: XCTestCase {
    static let sampleKey = "dGhlIHNhbXBsZSBub25jZQ=="

    /// A request a browser would send to `/ws`, with `extra` fields added and any field named in `without` left out.
    func request(
        method: String = "GET", target: String = "/ws", minorVersion: Int = 1, extra: [(String, String)] = [],
        without: Set<String> = []
    ) -> WebSocketUpgradeRequest {
        let base = [
            ("Host", "server.example.com"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
            ("Sec-WebSocket-Key", Self.sampleKey), ("Origin", "http://example.com"),
            ("Sec-WebSocket-Protocol", "chat, subd"), ("Sec-WebSocket-Version", "13"),
        ]
        let fields = (base.filter { !without.contains($0.0) } + extra).map {
            WebSocketUpgradeRequest.Field(name: $0.0, value: $0.1)
        }
        return WebSocketUpgradeRequest(method: method, target: target, minorVersion: minorVersion, fields: fields)
    }

    let handshake = WebSocketHandshake(path: "/ws")

    func refusal(_ request: WebSocketUpgradeRequest, _ handshake: WebSocketHandshake? = nil)
        -> WebSocketHandshakeRefusal?
    {
        if case .refused(let refusal) = (handshake ?? self.handshake).respond(to: request) { return refusal }
        return nil
    }

    func testTheRFCSampleKey() {
        XCTAssertEqual(WebSocketAcceptKey.accept(for: Self.sampleKey), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    func testAcceptedWithTheSubprotocol() {
        let outcome = handshake.respond(to: request())
        let expected =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Protocol: subd\r\n\r\n"
        XCTAssertEqual(outcome, .accepted(response: bytes(expected), subprotocol: "subd"))
        XCTAssertEqual(outcome.response, bytes(expected))
    }

    func testAcceptedWithoutASubprotocolWhenNoneIsOffered() {
        let outcome = handshake.respond(to: request(without: ["Sec-WebSocket-Protocol"]))
        guard case .accepted(let response, nil) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertFalse(String(decoding: response, as: UTF8.self).contains("Sec-WebSocket-Protocol"))
        XCTAssertTrue(String(decoding: response, as: UTF8.self).hasSuffix("xOo=\r\n\r\n"))
    }

    func testLenientSpellingsThatAreAllowed() {
        // Case-insensitive names and tokens, lists, a query string, several list fields, blanks around elements.
        let request = WebSocketUpgradeRequest(
            method: "GET", target: "/ws?token=1", minorVersion: 1,
            fields: [
                .init(name: "host", value: "h"), .init(name: "UPGRADE", value: "WebSocket"),
                .init(name: "connection", value: "keep-alive"), .init(name: "Connection", value: " foo ,Upgrade "),
                .init(name: "sec-websocket-key", value: Self.sampleKey),
                .init(name: "SEC-WEBSOCKET-VERSION", value: "13"),
                .init(name: "Sec-WebSocket-Protocol", value: "a"),
                .init(name: "Sec-WebSocket-Protocol", value: "b,subd"),
            ])
        XCTAssertEqual(
            handshake.respond(to: request),
            .accepted(response: handshake.respond(to: self.request()).response, subprotocol: "subd"))
    }

    func testEachRefusalAndItsStatus() {
        let cases: [(WebSocketUpgradeRequest, WebSocketHandshakeRefusal, Int)] = [
            (request(method: "POST"), .methodNotAllowed, 405),
            (request(method: "get"), .methodNotAllowed, 405),
            (request(target: "/other"), .notFound, 404),
            (request(target: "/ws/"), .notFound, 404),
            (request(minorVersion: 0), .httpVersionTooOld, 400),
            (request(without: ["Host"]), .missingHost, 400),
            (request(extra: [("Host", "again")]), .missingHost, 400),
            (request(without: ["Upgrade"]), .notWebSocketUpgrade, 426),
            (request(extra: [("Upgrade", "h2c")], without: ["Upgrade"]), .notWebSocketUpgrade, 426),
            (request(without: ["Connection"]), .notWebSocketUpgrade, 426),
            (request(extra: [("Connection", "keep-alive")], without: ["Connection"]), .notWebSocketUpgrade, 426),
            (request(without: ["Sec-WebSocket-Version"]), .unsupportedVersion, 426),
            (
                request(extra: [("Sec-WebSocket-Version", "8")], without: ["Sec-WebSocket-Version"]),
                .unsupportedVersion, 426
            ),
            (request(extra: [("Sec-WebSocket-Version", "13")]), .unsupportedVersion, 426),
            (request(without: ["Sec-WebSocket-Key"]), .invalidKey, 400),
            (request(extra: [("Sec-WebSocket-Key", Self.sampleKey)]), .invalidKey, 400),
            (
                request(extra: [("Sec-WebSocket-Protocol", "chat")], without: ["Sec-WebSocket-Protocol"]),
                .noSupportedSubprotocol, 400
            ),
            (
                request(extra: [("Sec-WebSocket-Protocol", "SUBD")], without: ["Sec-WebSocket-Protocol"]),
                .noSupportedSubprotocol, 400
            ),
        ]
        for (request, expected, status) in cases {
            XCTAssertEqual(refusal(request), expected, "\(request.fields)")
            XCTAssertEqual(expected.status, status)
        }
    }

    func testKeysThatAreNotBase64Of16Bytes() {
        let bad = [
            "", "dGhlIHNhbXBsZSBub25jZQ=", "dGhlIHNhbXBsZSBub25jZQ", "dGhlIHNhbXBsZSBub25jZQ===",
            "dGhlIHNhbXBsZSBub25jZ===", "dGhlIHNhbXBsZSBub25j*Q==", "dGhlIHNhbXBsZSBub25jZQ==\r",
            " dGhlIHNhbXBsZSBub25jZQ==", "dGhlIHNhbXBsZSBub25jZQAA", "dGhlIHNhbXBsZSBub25jZSBt",  // 18 bytes
            "dGhlIHNhbXBsZSBub25j",  // 15 bytes
        ]
        for key in bad {
            XCTAssertFalse(WebSocketAcceptKey.isValid(key), key)
            let request = request(extra: [("Sec-WebSocket-Key", key)], without: ["Sec-WebSocket-Key"])
            XCTAssertEqual(refusal(request), .invalidKey, key)
        }
        for key in [Self.sampleKey, "AAAAAAAAAAAAAAAAAAAAAA==", "+/+/+/+/+/+/+/+/+/+/+w==", "zzzzzzzzzzzzzzzzzzzzzz=="]
        {
            XCTAssertTrue(WebSocketAcceptKey.isValid(key), key)
        }
    }

    func testOriginAllowList() {
        let limited = WebSocketHandshake(
            path: "/ws", allowedOrigins: ["https://App.example.com", "http://localhost:8080"])
        func origin(_ value: String) -> WebSocketUpgradeRequest {
            request(extra: [("Origin", value)], without: ["Origin"])
        }
        XCTAssertNil(refusal(origin("https://app.example.com"), limited))
        XCTAssertNil(refusal(origin("HTTPS://APP.EXAMPLE.COM"), limited))
        XCTAssertNil(refusal(origin("http://localhost:8080"), limited))
        XCTAssertEqual(refusal(origin("http://localhost:8081"), limited), .originNotAllowed)
        XCTAssertEqual(refusal(origin("http://localhost"), limited), .originNotAllowed)
        XCTAssertEqual(refusal(origin("https://app.example.com.evil.net"), limited), .originNotAllowed)
        XCTAssertEqual(refusal(origin("null"), limited), .originNotAllowed)
        XCTAssertEqual(refusal(origin("http://app.example.com"), limited), .originNotAllowed)
        // No Origin: not a browser; let in (see WebSocketHandshake).
        XCTAssertNil(refusal(request(without: ["Origin"]), limited))
        // An empty list lets in any origin.
        XCTAssertNil(refusal(origin("https://anything.example")))
        XCTAssertEqual(WebSocketHandshakeRefusal.originNotAllowed.status, 403)
    }

    func testRefusalResponses() {
        XCTAssertEqual(
            String(decoding: WebSocketHandshakeRefusal.unsupportedVersion.response, as: UTF8.self),
            "HTTP/1.1 426 Upgrade Required\r\nSec-WebSocket-Version: 13\r\nContent-Type: text/plain; charset=utf-8\r\n"
                + "Content-Length: 39\r\nConnection: close\r\n\r\nonly WebSocket version 13 is supported\n")
        let all: [WebSocketHandshakeRefusal] = [
            .methodNotAllowed, .notFound, .httpVersionTooOld, .missingHost, .notWebSocketUpgrade, .unsupportedVersion,
            .invalidKey, .originNotAllowed, .noSupportedSubprotocol,
        ]
        for refusal in all {
            let text = String(decoding: refusal.response, as: UTF8.self)
            let parts = text.components(separatedBy: "\r\n\r\n")
            XCTAssertEqual(parts.count, 2, "\(refusal)")
            XCTAssertTrue(parts[0].hasPrefix("HTTP/1.1 \(refusal.status) "), text)
            XCTAssertTrue(parts[0].contains("\r\nConnection: close"), text)
            XCTAssertTrue(parts[0].contains("\r\nContent-Length: \(parts[1].utf8.count)"), text)
            XCTAssertEqual(parts[1], refusal.description + "\n")
            XCTAssertEqual(parts[1].filter { $0 == "\n" }.count, 1)
        }
        XCTAssertTrue(
            String(decoding: WebSocketHandshakeRefusal.methodNotAllowed.response, as: UTF8.self).contains(
                "\r\nAllow: GET\r\n"))
        XCTAssertTrue(
            String(decoding: WebSocketHandshakeRefusal.notWebSocketUpgrade.response, as: UTF8.self).contains(
                "\r\nUpgrade: websocket\r\n"))
    }
}
