import Foundation
import XCTest

@testable import SubscriptionNATS

/// The client frames, byte for byte, and the checks that refuse what the wire cannot carry.
final class NATSEncoderTests: XCTestCase {
    private func text(_ body: (inout [UInt8]) throws -> Void) rethrows -> String {
        var out: [UInt8] = []
        try body(&out)
        return String(decoding: out, as: UTF8.self)
    }

    func testPublishWithAndWithoutReply() throws {
        XCTAssertEqual(
            try text { try NATSEncoder.publish(subject: "a.b", payload: bytes("hello"), into: &$0) },
            "PUB a.b 5\r\nhello\r\n")
        XCTAssertEqual(
            try text { try NATSEncoder.publish(subject: "a", replyTo: "_INBOX.x.1", payload: [], into: &$0) },
            "PUB a _INBOX.x.1 0\r\n\r\n")
    }

    func testPublishWithHeadersIsHPUBWithExactSizes() throws {
        var headers = NATSHeaders()
        headers.append("Nats-Expected-Last-Subject-Sequence", "0")
        headers.append("Subd-Info", "unit=EUR price=12")
        let frame = try text {
            try NATSEncoder.publish(subject: "$KV.b.k", replyTo: "r", headers: headers, payload: bytes("v1"), into: &$0)
        }
        let block = "NATS/1.0\r\nNats-Expected-Last-Subject-Sequence: 0\r\nSubd-Info: unit=EUR price=12\r\n\r\n"
        XCTAssertEqual(frame, "HPUB $KV.b.k r \(block.utf8.count) \(block.utf8.count + 2)\r\n\(block)v1\r\n")
        XCTAssertEqual(NATSHeaderBlock.encodedCount(headers), block.utf8.count)
        // Read back as the server would deliver it.
        var parser = NATSParser()
        parser.append(
            contentsOf: bytes("HMSG $KV.b.k 1 r \(block.utf8.count) \(block.utf8.count + 2)\r\n\(block)v1\r\n"))
        XCTAssertEqual(
            parser.next(),
            .success(
                .message(
                    NATSMessage(
                        subject: "$KV.b.k", sid: 1, replyTo: "r", headers: headers, payload: bytes("v1")))))
    }

    func testSubscribeUnsubscribePingPongConnect() throws {
        XCTAssertEqual(
            try text { try NATSEncoder.subscribe(subject: "subd.m.>", queue: nil, sid: 7, into: &$0) },
            "SUB subd.m.> 7\r\n")
        XCTAssertEqual(
            try text { try NATSEncoder.subscribe(subject: "a.*", queue: "workers", sid: 12, into: &$0) },
            "SUB a.* workers 12\r\n")
        XCTAssertEqual(text { NATSEncoder.unsubscribe(sid: 7, into: &$0) }, "UNSUB 7\r\n")
        XCTAssertEqual(
            text { NATSEncoder.unsubscribe(sid: 18_446_744_073_709_551_615, max: 3, into: &$0) },
            "UNSUB 18446744073709551615 3\r\n")
        XCTAssertEqual(text { NATSEncoder.ping(into: &$0) }, "PING\r\n")
        XCTAssertEqual(text { NATSEncoder.pong(into: &$0) }, "PONG\r\n")
        let connect = text {
            NATSEncoder.connect(
                NATSConnectFields(name: "node \"a\"", echo: false, authentication: .user("u", password: "p w")),
                into: &$0)
        }
        XCTAssertTrue(connect.hasPrefix("CONNECT {") && connect.hasSuffix("}\r\n"), connect)
        let line = Data(connect.dropFirst("CONNECT ".count).dropLast(1).utf8)  // CR LF is one Character
        let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: line) as? [String: Any])
        XCTAssertEqual(json["verbose"] as? Bool, false)
        XCTAssertEqual(json["echo"] as? Bool, false)
        XCTAssertEqual(json["headers"] as? Bool, true)
        XCTAssertEqual(json["no_responders"] as? Bool, true)
        XCTAssertEqual(json["protocol"] as? Int, 1)
        XCTAssertEqual(json["name"] as? String, "node \"a\"")
        XCTAssertEqual(json["user"] as? String, "u")
        XCTAssertEqual(json["pass"] as? String, "p w")
        XCTAssertNil(json["auth_token"])
        let token = text { NATSEncoder.connect(NATSConnectFields(authentication: .token("s3cret")), into: &$0) }
        XCTAssertTrue(token.contains("\"auth_token\":\"s3cret\""), token)
    }

    func testSubjectsTheWireCannotCarryAreRefusedAndNothingIsWritten() {
        let refused: [(String, Bool, NATSSubject.Problem)] = [
            ("", true, .emptyToken), ("a..b", true, .emptyToken), (".a", true, .emptyToken), ("a.", true, .emptyToken),
            ("a b", true, .forbiddenByte), ("a\tb", true, .forbiddenByte), ("a\r\nPUB", true, .forbiddenByte),
            ("a.*", false, .misplacedWildcard), ("a.>", false, .misplacedWildcard), ("a.>.b", true, .misplacedWildcard),
            ("a*", true, .misplacedWildcard), ("*a", true, .misplacedWildcard), ("a.b>", true, .misplacedWildcard),
        ]
        for (subject, wildcards, problem) in refused {
            var out: [UInt8] = []
            if wildcards {
                XCTAssertThrowsError(try NATSEncoder.subscribe(subject: subject, queue: nil, sid: 1, into: &out)) {
                    XCTAssertEqual($0 as? NATSError, .invalidSubject(subject, problem: problem), subject)
                }
            } else {
                XCTAssertThrowsError(try NATSEncoder.publish(subject: subject, payload: [], into: &out)) {
                    XCTAssertEqual($0 as? NATSError, .invalidSubject(subject, problem: problem), subject)
                }
            }
            XCTAssertTrue(out.isEmpty, subject)
        }
        for accepted in ["a", "subd.m.SCIENCE.physik-ä", "$KV.b.k", "a.*.c", ">", "*", "a.>"] {
            XCTAssertNoThrow(try NATSSubject.check(accepted, allowWildcards: true), accepted)
        }
        var out: [UInt8] = []
        XCTAssertThrowsError(try NATSEncoder.subscribe(subject: "a", queue: "two words", sid: 1, into: &out))
        XCTAssertThrowsError(
            try NATSEncoder.publish(
                subject: "a", headers: ["Bad Name": "v"], payload: [], into: &out))
        XCTAssertThrowsError(try NATSEncoder.publish(subject: "a", headers: ["K": "a\r\nb"], payload: [], into: &out))
        XCTAssertTrue(out.isEmpty)
    }

    func testServerAddressesAsConfiguredAndAdvertised() throws {
        XCTAssertEqual(
            try NATSServerAddress(parsing: "127.0.0.1:4223"), NATSServerAddress(host: "127.0.0.1", port: 4223))
        XCTAssertEqual(
            try NATSServerAddress(parsing: "nats://localhost"), NATSServerAddress(host: "localhost", port: 4222))
        XCTAssertEqual(
            try NATSServerAddress(parsing: "nats://u:p@h:1/"),
            NATSServerAddress(host: "h", port: 1, authentication: .user("u", password: "p")))
        XCTAssertEqual(
            try NATSServerAddress(parsing: "nats://tok@h"),
            NATSServerAddress(host: "h", port: 4222, authentication: .token("tok")))
        XCTAssertEqual(try NATSServerAddress(parsing: "[::1]:5000"), NATSServerAddress(host: "::1", port: 5000))
        XCTAssertEqual(NATSServerAddress(host: "::1", port: 5000).description, "[::1]:5000")
        for bad in ["", "h:0", "h:x", "a:b:c", "nats://@h"] {
            XCTAssertThrowsError(try NATSServerAddress(parsing: bad), bad)
        }
    }
}
