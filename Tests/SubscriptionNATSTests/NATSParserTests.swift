import XCTest

@testable import SubscriptionNATS

/// The server frames, each fed whole, one byte at a time and in random chunks.
final class NATSParserTests: XCTestCase {
    func testPingPongOkAndErrorInAnyCase() {
        assertParses(
            bytes("PING\r\nPONG\r\n+OK\r\n-ERR 'Authorization Violation'\r\nping\r\nPong\r\n-ERR no quotes\r\n"),
            [
                .success(.ping), .success(.pong), .success(.ok), .success(.error("Authorization Violation")),
                .success(.ping), .success(.pong), .success(.error("no quotes")),
            ])
    }

    func testMessageWithAndWithoutReplyIncludingTheServersDoubleSpace() {
        // nats-server writes `MSG subj sid  size` (two spaces) for a message without a reply subject.
        assertParses(
            bytes("MSG a.b 1 5\r\nhello\r\nMSG _INBOX.x.1 2  2\r\nhi\r\nMSG a 3 r.1 0\r\n\r\nmsg\ta\t4\t3\r\nx\ny\r\n"),
            [
                message("a.b", 1, "hello"), message("_INBOX.x.1", 2, "hi"), message("a", 3, reply: "r.1", ""),
                message("a", 4, "x\ny"),
            ])
    }

    func testPayloadMayHoldCRLFAndAnyByte() {
        var input = bytes("MSG bin 9 6\r\n")
        input += [0, 0x0D, 0x0A, 0xFF, 0x0A, 0x0D]
        input += bytes("\r\n")
        let expected: FrameResult = .success(
            .message(NATSMessage(subject: "bin", sid: 9, payload: [0, 0x0D, 0x0A, 0xFF, 0x0A, 0x0D])))
        assertParses(input, [expected])
    }

    func testHeaderMessageWithFieldsInOrder() {
        let block =
            "NATS/1.0\r\nSubd-From: lab\r\nSubd-Info: unit=EUR price=12\r\nX:  spaced value  \r\n"
            + "Subd-From: again\r\n\r\n"
        let input = "HMSG subd.m.SCIENCE 7 \(block.utf8.count) \(block.utf8.count + 4)\r\n\(block)V1.0\r\n"
        var headers = NATSHeaders()
        headers.append("Subd-From", "lab")
        headers.append("Subd-Info", "unit=EUR price=12")
        headers.append("X", "spaced value")
        headers.append("Subd-From", "again")
        assertParses(bytes(input), [message("subd.m.SCIENCE", 7, headers: headers, "V1.0")])
        XCTAssertEqual(headers["subd-from"], "lab")
        XCTAssertEqual(headers.values(of: "SUBD-FROM"), ["lab", "again"])
    }

    func testStatusMessagesOfNoRespondersAndNotFound() {
        // The exact frames nats-server 2.9.10 sends (seen on the wire).
        let input =
            "HMSG _INBOX.x.9 1 16 16\r\nNATS/1.0 503\r\n\r\n\r\n"
            + "HMSG _INBOX.x.5 1  34 34\r\nNATS/1.0 404 Message Not Found\r\n\r\n\r\n"
        let results = parse(bytes(input), mode: .allAtOnce)
        XCTAssertEqual(
            results,
            [
                message("_INBOX.x.9", 1, headers: NATSHeaders([], status: 503), ""),
                message(
                    "_INBOX.x.5", 1, headers: NATSHeaders([], status: 404, statusDescription: "Message Not Found"), ""),
            ])
        assertParses(bytes(input), results)
        if case .success(.message(let noResponders)) = results[0] { XCTAssertEqual(noResponders.status, 503) }
    }

    func testInfoIsDecodedAndSetsMaxPayload() {
        let info = """
            INFO {"server_id":"NCK","server_name":"n1","version":"2.9.10","proto":1,"go":"go1.19.8","host":"127.0.0.1",\
            "port":14221,"headers":true,"max_payload":2048,"jetstream":true,"client_id":12,"client_ip":"127.0.0.1",\
            "cluster":"subd","connect_urls":["127.0.0.1:14221","127.0.0.1:14223"],"auth_required":true} \r\n
            """
        var parser = NATSParser()
        parser.append(contentsOf: bytes(info))
        guard case .success(.info(let decoded))? = parser.next() else { return XCTFail("no INFO") }
        XCTAssertEqual(decoded.serverName, "n1")
        XCTAssertEqual(decoded.version, "2.9.10")
        XCTAssertEqual(decoded.maxPayload, 2048)
        XCTAssertTrue(decoded.supportsHeaders)
        XCTAssertTrue(decoded.jetStream)
        XCTAssertTrue(decoded.authRequired)
        XCTAssertEqual(decoded.clientID, 12)
        XCTAssertEqual(decoded.connectURLs, ["127.0.0.1:14221", "127.0.0.1:14223"])
        XCTAssertEqual(parser.limits.maxPayload, 2048)
        // The next message is held to the new limit.
        parser.append(contentsOf: bytes("MSG a 1 2049\r\n"))
        XCTAssertEqual(parser.next(), .failure(.payloadTooBig(size: 2049, limit: 2048)))
    }

    func testBlankLinesAreSkipped() {
        assertParses(bytes("\r\n  \r\nPING\r\n\n"), [.success(.ping)])
    }

    func testManyFramesPipelined() {
        var input: [UInt8] = []
        var expected: [FrameResult] = []
        for index in 0..<300 {
            let payload = String(repeating: "x", count: index % 37)
            switch index % 4 {
            case 0:
                input += bytes("MSG s.\(index) \(index) \(payload.utf8.count)\r\n\(payload)\r\n")
                expected.append(message("s.\(index)", UInt64(index), payload))
            case 1:
                let block = "NATS/1.0\r\nK: \(index)\r\n\r\n"
                input += bytes(
                    "HMSG s \(index) r.\(index) \(block.utf8.count) \(block.utf8.count + payload.utf8.count)\r\n"
                        + "\(block)\(payload)\r\n"
                )
                expected.append(message("s", UInt64(index), reply: "r.\(index)", headers: ["K": "\(index)"], payload))
            case 2:
                input += bytes("PING\r\n")
                expected.append(.success(.ping))
            default:
                input += bytes("PONG\r\n")
                expected.append(.success(.pong))
            }
        }
        assertParses(input, expected)
    }

    func testLargePayloadAcrossManyReads() {
        let payload = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var input = bytes("MSG big 1 \(payload.count)\r\n")
        input += payload
        input += bytes("\r\nPING\r\n")
        assertParses(
            input, [.success(.message(NATSMessage(subject: "big", sid: 1, payload: payload))), .success(.ping)])
    }
}
