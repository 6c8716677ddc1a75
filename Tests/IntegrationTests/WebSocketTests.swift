import Foundation
import Glibc
import XCTest

/// `ws://` and `wss://` listeners over the real subd: the line protocol inside WebSocket messages, spoken by a real
/// client library (Debian's python3-websockets, `PythonWebSocket`; `make deps-test` installs it, and without it
/// the tests fail) next to plain TCP clients of the same daemon, and by hand (`RawWebSocket`) for the upgrade
/// requests and frames RFC 6455 refuses, each answered with its HTTP status or close code while the daemon serves on.
final class WebSocketTests: IntegrationTestCase {
    private var webSockets: [PythonWebSocket] = []
    private var tlsFiles: TLSFiles?

    override func tearDown() {
        for webSocket in webSockets { webSocket.end() }
        webSockets.removeAll()
        super.tearDown()
        tlsFiles?.remove()
    }

    /// The path the listeners serve.
    private static let path = "/subd"

    /// A daemon with the harness's TCP listener and `ws://127.0.0.1:0/subd` (`wss://` with `secure`), numbers X and
    /// Y, max_payload 65536; and the WebSocket port.
    private func startWebSocketDaemon(
        _ config: DaemonConfig = DaemonConfig(), secure: Bool = false
    ) throws -> (Daemon, UInt16) {
        var config = config
        config.numbers += ["X", "Y"]
        config.maxPayload = config.maxPayload ?? 65_536
        let scheme = secure ? "wss" : "ws"
        let daemon = try startDaemon(config, extraArguments: ["--listen", "\(scheme)://127.0.0.1:0\(Self.path)"])
        return (daemon, try daemon.webSocketPort(secure: secure))
    }

    /// A python3-websockets client of `ws://127.0.0.1:port/subd` (or `url`); ended at teardown. Fails when the
    /// upgrade is refused.
    private func webSocket(
        _ port: UInt16, url: String? = nil, origin: String? = nil, caFile: String? = nil,
        offeringSubprotocol: Bool = true, label: String = "websocket"
    ) throws -> PythonWebSocket {
        let url = url ?? "ws://127.0.0.1:\(port)\(Self.path)"
        switch try PythonWebSocket.open(
            url, origin: origin, caFile: caFile, offeringSubprotocol: offeringSubprotocol, label: label)
        {
        case .open(let webSocket):
            webSockets.append(webSocket)
            return webSocket
        case .refused(let status):
            throw HarnessError.malformed("\(label): the upgrade at \(url) was refused with \(status)")
        }
    }

    /// The payloads every exchange is tried with: none, every byte value, and max_payload's 65536 bytes.
    private static let payloads: [[UInt8]] = [
        [], Array(0...255), (0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) },
    ]

    // MARK: A real client next to TCP clients

    func testMessagesCrossBetweenWebSocketAndTCPClientsByteExact() throws {
        let (daemon, port) = try startWebSocketDaemon()
        let webSocket = try webSocket(port)
        XCTAssertEqual(webSocket.subprotocol, "subd")
        let tcp = try connect(daemon, "tcp")
        try subscribe(webSocket.lines, "X")
        try subscribe(tcp, "Y")
        for payload in Self.payloads {
            XCTAssertEqual(try tcp.pub("X", payload), .ok("1"), "\(payload.count) bytes from TCP")
            XCTAssertEqual(try webSocket.lines.nextMessage().payload, payload, "\(payload.count) bytes to WebSocket")
            XCTAssertEqual(try webSocket.lines.pub("Y", payload), .ok("1"), "\(payload.count) bytes from WebSocket")
            XCTAssertEqual(try tcp.nextMessage().payload, payload, "\(payload.count) bytes to TCP")
        }
        // The largest command in one message: a frame may carry max_line + max_payload + 4 bytes.
        let largest = Self.payloads[2]
        try webSocket.sendBinary(Array("PUB Y \(largest.count)\r\n".utf8) + largest + Array("\r\n".utf8))
        XCTAssertEqual(try webSocket.lines.readReply(), .ok("1"))
        XCTAssertEqual(try tcp.nextMessage().payload, largest)
    }

    func testSeveralCommandsInOneMessageAndOneCommandInSeveral() throws {
        let (daemon, port) = try startWebSocketDaemon()
        let webSocket = try webSocket(port)
        let tcp = try connect(daemon, "tcp")
        try subscribe(tcp, "X")
        try webSocket.sendBinary(Array("SUB Y\r\nPING\nPUB X 2\r\nhi\r\nLIST X\n".utf8))
        XCTAssertEqual(try webSocket.lines.readReply(), .ok())
        XCTAssertEqual(try webSocket.lines.readReply(), .status("PONG"))
        XCTAssertEqual(try webSocket.lines.readReply(), .ok("1"))
        XCTAssertEqual(try webSocket.lines.readReply(), .list(["X 1"]))
        XCTAssertEqual(try tcp.nextMessage().payload, Array("hi".utf8))

        // One PUB over three messages, then over three fragments of one message, then in a text message.
        for part in ["PUB X 1", "1\r\nhello ", "world\r\n"] { try webSocket.sendBinary(Array(part.utf8)) }
        XCTAssertEqual(try webSocket.lines.readReply(), .ok("1"))
        XCTAssertEqual(try tcp.nextMessage().payload, Array("hello world".utf8))
        try webSocket.sendFragments([Array("PU".utf8), Array("B X 3\r\nab".utf8), Array("c\r\n".utf8)])
        XCTAssertEqual(try webSocket.lines.readReply(), .ok("1"))
        XCTAssertEqual(try tcp.nextMessage().payload, Array("abc".utf8))
        try webSocket.sendText("PUB X 5\r\nhéé\r\n")
        XCTAssertEqual(try webSocket.lines.readReply(), .ok("1"))
        XCTAssertEqual(try tcp.nextMessage().payload, Array("héé".utf8))
    }

    func testAClientOfferingNoSubprotocolIsServed() throws {
        let (_, port) = try startWebSocketDaemon()
        let webSocket = try webSocket(port, offeringSubprotocol: false)
        XCTAssertNil(webSocket.subprotocol)
        assertOpen(webSocket.lines, "a client offering no subprotocol")
    }

    func testPingsAndTheCloseCodesOfQuitAndShutdown() throws {
        let (daemon, port) = try startWebSocketDaemon()
        let quitting = try webSocket(port, label: "quitting")
        try quitting.ping(Array("are you there".utf8))
        try quitting.ping([])
        XCTAssertEqual(try quitting.lines.command("QUIT"), .ok("bye"))
        XCTAssertEqual(try quitting.closeCode(), 1000, "QUIT closes normally")

        let closing = try webSocket(port, label: "closing")
        try closing.close(code: 1000)
        XCTAssertEqual(try closing.closeCode(), 1000, "the client's close is echoed")

        let staying = try webSocket(port, label: "staying")
        try subscribe(staying.lines, "X")
        XCTAssertEqual(daemon.stop(), 0, daemon.log)
        // Timed by subd's own log, which a loaded machine's delays in the test process and in subd's exit do not
        // lengthen: the drain ends at once, not at the 5 s drain deadline (nor a session's 5 s close deadline).
        let drain = try XCTUnwrap(daemon.drainSeconds, daemon.log)
        XCTAssertLessThan(drain, 4.5, "closed at once, not at the drain deadline")
        XCTAssertEqual(try staying.closeCode(), 1001, "going away: the server stops")
    }

    func testSecureWebSocketWithAMadeCertificate() throws {
        let files = try TLSFiles()
        tlsFiles = files
        let (certificate, key) = try files.selfSigned("server", commonName: "localhost")
        let config = DaemonConfig(extraLines: ["tls_cert: \"\(certificate)\"", "tls_key: \"\(key)\""])
        let (daemon, port) = try startWebSocketDaemon(config, secure: true)
        let webSocket = try webSocket(port, url: "wss://localhost:\(port)\(Self.path)", caFile: certificate)
        try subscribe(webSocket.lines, "X")
        let tcp = try connect(daemon, "tcp")
        XCTAssertEqual(try tcp.pub("X", Array(0...255)), .ok("1"))
        XCTAssertEqual(try webSocket.lines.nextMessage().payload, Array(0...255))
        try webSocket.ping(Array("over TLS".utf8))
    }

    // MARK: Limits and rules

    func testUsersAndTheAuthenticationTimeoutApply() throws {
        let extraLines = [
            "auth_token: \"shared\"", "auth_failure_delay: 0.01", "users:", "  - name: alice",
            "    secret_hash: \"\(try hashSecret("alice-pw"))\"", "    publish: [\"X\"]", "    subscribe: [\"X\"]",
        ]
        // Alice logs in through a Python bridge's start-up, three round trips and a PBKDF2 verify: an auth_timeout
        // long enough for that on a loaded machine; the silent client meets a short one, on a daemon of its own.
        let (daemon, port) = try startWebSocketDaemon(DaemonConfig(authTimeout: 30, extraLines: extraLines))
        let alice = try webSocket(port, label: "alice")
        assertError(try alice.lines.command("SUB X"), "AUTH", "before HELLO")
        assertError(try alice.lines.command("HELLO name=alice token=wrong"), "AUTH", "a wrong secret")
        guard case .status(let hello) = try alice.lines.command("HELLO name=alice token=alice-pw") else {
            return XCTFail("alice could not log in")
        }
        XCTAssertTrue(hello.hasPrefix("OK subd"), hello)
        try subscribe(alice.lines, "X")
        assertError(try alice.lines.pub("Y", Array("no".utf8)), "DENIED", "a number alice may not publish to")
        XCTAssertEqual(try alice.lines.pub("X", Array("yes".utf8)), .ok("1"))
        XCTAssertEqual(try alice.lines.nextMessage().attributes["from"], "alice")
        let tcp = try connect(daemon, "tcp")
        XCTAssertEqual(try tcp.command("HELLO token=shared").errorCode, nil)
        assertOpen(tcp)

        let authTimeout = 2.0
        let (_, shortPort) = try startWebSocketDaemon(DaemonConfig(authTimeout: authTimeout, extraLines: extraLines))
        let opened = Date()  // before the TCP connect, from which auth_timeout counts
        let silent = try webSocket(shortPort, label: "never says HELLO")
        XCTAssertEqual(try silent.closeCode(timeout: 15), 1008, "cut by auth_timeout: a close of the server's own")
        let elapsed = Date().timeIntervalSince(opened)
        XCTAssertGreaterThanOrEqual(elapsed, authTimeout - 0.05, "not before auth_timeout")
        XCTAssertLessThan(elapsed, authTimeout + 8, "soon after auth_timeout (command_timeout is 60 s)")
    }

    func testOnlyTheListedOriginsAreLetIn() throws {
        let (daemon, port) = try startWebSocketDaemon(
            DaemonConfig(extraLines: ["websocket_origins: [\"https://good.example\"]"]))
        let url = "ws://127.0.0.1:\(port)\(Self.path)"
        guard case .refused(let status) = try PythonWebSocket.open(url, origin: "https://evil.example") else {
            return XCTFail("another origin was let in")
        }
        XCTAssertEqual(status, 403)
        assertOpen(try webSocket(port, origin: "https://GOOD.example").lines, "the listed origin, case aside")
        assertOpen(try webSocket(port).lines, "no Origin: not a browser")
        assertOpen(try connect(daemon, "tcp"))
    }

    func testCommandTimeoutEndsAnUnfinishedUpgrade() throws {
        let (daemon, port) = try startWebSocketDaemon(DaemonConfig(commandTimeout: 1))
        // Reads wait up to 10 s, longer than the bound below, so that the bound is what fails a late end.
        let stalled = try LineClient.connect(port: port, label: "stalled upgrade", timeout: 10)
        defer { stalled.close() }
        let started = Date()
        try stalled.send("GET \(Self.path) HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        // Answered in HTTP, as the client still speaks it.
        XCTAssertEqual(String(decoding: try stalled.readLine(), as: UTF8.self), "HTTP/1.1 408 Request Timeout\r")
        try stalled.expectClosed(discardingData: true)
        XCTAssertLessThan(Date().timeIntervalSince(started), 8, "ended by command_timeout (1 s here, 60 s by default)")
        assertOpen(try webSocket(port).lines, "a WebSocket client after it")
        assertOpen(try connect(daemon, "tcp"))
    }

    /// At `max_connections`, a WebSocket client is told in HTTP (503) and closed; one may connect once a place is free.
    func testMaxConnectionsAnswers503() throws {
        let (daemon, port) = try startWebSocketDaemon(DaemonConfig(maxConnections: 1))
        let first = try connect(daemon, "tcp")
        assertOpen(first)
        let refused = try RawWebSocket(port: port, request: RawWebSocket.request(Self.path), label: "one too many")
        XCTAssertEqual(refused.status, 503)
        try refused.socket.expectClosed(discardingData: true)
        first.close()
        // The place is free once subd saw the close: retry briefly.
        let deadline = Date(timeIntervalSinceNow: 5)
        while try RawWebSocket(port: port, request: RawWebSocket.request(Self.path), label: "retry").status != 101 {
            XCTAssertLessThan(Date(), deadline, "no WebSocket client let in after the TCP one left")
            if Date() >= deadline { return }
            usleep(20_000)
        }
    }

    func testASubscriberThatDoesNotReadIsCutWhileOthersGoOn() throws {
        // max_pending may be no less than max_payload + 512.
        let (daemon, port) = try startWebSocketDaemon(DaemonConfig(maxPending: 70_000))
        let slow = try RawWebSocket.upgraded(port: port, path: Self.path, label: "slow", receiveBuffer: 4096)
        try slow.sendCommands("SUB X\n")
        XCTAssertEqual(try slow.readReplies(), "+OK\n")
        let publisher = try connect(daemon, "publisher and subscriber", timeout: 10)
        try subscribe(publisher, "X")
        let payload = [UInt8](repeating: UInt8(ascii: "w"), count: 1024)
        let batch = Array(repeating: Array("PUB X 1024\n".utf8) + payload + [0x0A], count: 64).flatMap { $0 }
        var receivers = 2
        var sent = 0
        var received = 0
        while receivers == 2 && sent < 50_000 {
            try publisher.send(batch)
            for _ in 0..<64 {
                guard case .status(let text) = try publisher.readReply(), let count = Int(text.dropFirst(3)) else {
                    return XCTFail("PUB did not get +OK n")
                }
                receivers = min(receivers, count)
            }
            sent += 64
            received += publisher.takePushes().count  // its own copies come before each reply
        }
        XCTAssertEqual(receivers, 1, "the WebSocket subscriber was not cut after \(sent) messages")
        XCTAssertEqual(received, sent, "the publisher's own subscription missed nothing")
        XCTAssertEqual(try stats(publisher)["slow_consumers"], "1")
        XCTAssertEqual(try publisher.pub("X", Array("still here".utf8)), .ok("1"))
        XCTAssertEqual(try publisher.nextMessage().payload, Array("still here".utf8))
        try slow.socket.expectClosed(discardingData: true)
    }

    // MARK: Refused upgrades and bad frames

    func testBadUpgradeRequestsGetTheirHTTPStatus() throws {
        let (daemon, port) = try startWebSocketDaemon()
        let tcp = try connect(daemon, "tcp")
        let cases: [(String, [UInt8], Int)] = [
            ("POST", RawWebSocket.request(Self.path, method: "POST"), 405),
            ("another path", RawWebSocket.request("/other"), 404),
            ("no Upgrade", RawWebSocket.request(Self.path, removing: ["Upgrade"]), 426),
            ("no Connection", RawWebSocket.request(Self.path, removing: ["Connection"]), 426),
            ("version 12", RawWebSocket.request(Self.path, changing: ["Sec-WebSocket-Version": "12"]), 426),
            ("no key", RawWebSocket.request(Self.path, removing: ["Sec-WebSocket-Key"]), 400),
            ("a short key", RawWebSocket.request(Self.path, changing: ["Sec-WebSocket-Key": "c2hvcnQ="]), 400),
            (
                "neither subd nor mqtt offered",
                RawWebSocket.request(Self.path, changing: ["Sec-WebSocket-Protocol": "chat, mqttv3.1"]), 400
            ),
            ("not HTTP", Array("hello there\r\n\r\n".utf8), 400),
        ]
        for (name, bytes, status) in cases {
            let raw = try RawWebSocket(port: port, request: bytes, label: name)
            XCTAssertEqual(raw.status, status, name)
            try raw.socket.expectClosed(discardingData: true)
            raw.socket.close()
            assertOpen(tcp, "after \(name)")
        }
        assertOutput(daemon.child.stderr, contains: "WebSocket client refused")

        let accepted = try RawWebSocket(port: port, request: RawWebSocket.request(Self.path))
        XCTAssertEqual(accepted.status, 101)
        XCTAssertEqual(accepted.fields["sec-websocket-accept"], RawWebSocket.acceptKey)
        XCTAssertEqual(accepted.fields["sec-websocket-protocol"], "subd")
        let unnamed = try RawWebSocket(
            port: port, request: RawWebSocket.request(Self.path, removing: ["Sec-WebSocket-Protocol"]))
        XCTAssertEqual(unnamed.status, 101)
        XCTAssertNil(unnamed.fields["sec-websocket-protocol"], "no subprotocol offered, none named")
    }

    func testBadFramesAreClosedWithTheViolationsCode() throws {
        let (daemon, port) = try startWebSocketDaemon(DaemonConfig(maxLine: 1024))
        let tcp = try connect(daemon, "tcp")
        let limit = 1024 + 65_536 + 4  // max_line + max_payload + 4
        let command = Array("PING\n".utf8)
        typealias Raw = RawWebSocket
        let cases: [(String, [UInt8], Int)] = [
            ("unmasked", Raw.frame(Raw.binary, command, masked: false), 1002),
            ("reserved opcode 3", Raw.frame(0x3, command), 1002),
            ("RSV1", Raw.frame(Raw.binary, command, rsv: 0x40), 1002),
            ("a 126-byte ping", Raw.frame(Raw.ping, Array(repeating: 0x61, count: 126)), 1002),
            ("a fragmented ping", Raw.frame(Raw.ping, [0x61], fin: false), 1002),
            ("a text message not UTF-8", Raw.frame(Raw.text, [0x50, 0xC3, 0x28]), 1007),
            ("a frame over the limit", Raw.frame(Raw.binary, [], length: limit + 1), 1009),
        ]
        for (name, bytes, code) in cases {
            let raw = try RawWebSocket.upgraded(port: port, path: Self.path, label: name)
            try raw.sendCommands("PING\n")
            XCTAssertEqual(try raw.readReplies(), "+PONG\n", name)
            try raw.send(bytes)
            XCTAssertEqual(try raw.closeCode(), code, name)
            raw.socket.close()
            assertOpen(tcp, "after \(name)")
        }
        assertOutput(daemon.child.stderr, contains: "WebSocket client refused")
    }

    /// A client that only pings and never reads is paused as one that only sends `PING`: once its pongs pass the
    /// pause mark the server stops reading it, so what it holds stays bounded (before, every ping was read and its
    /// pong queued, without end); other clients go on.
    func testAClientThatOnlyPingsAndNeverReadsIsPaused() throws {
        let (daemon, port) = try startWebSocketDaemon(DaemonConfig(maxPending: 70_000))
        let pinger = try RawWebSocket.upgraded(port: port, path: Self.path, label: "pinger", receiveBuffer: 4096)
        let ping = RawWebSocket.frame(RawWebSocket.ping, [UInt8](repeating: 0x70, count: 125))
        let chunk = Array([[UInt8]](repeating: ping, count: 65_536 / ping.count).joined())
        let limit = 64 << 20
        var sent = 0
        do {
            while sent < limit {
                try pinger.send(chunk)
                sent += chunk.count
            }
        } catch HarnessError.timeout(_) {
            // The send blocked: the server stopped reading.
        }
        XCTAssertLessThan(sent, limit, "the server read 64 MiB of pings from a client that reads nothing")
        assertOpen(try connect(daemon, "tcp"))
    }

    /// Commands in the same read as the client's close frame are served first, and the close is echoed after their
    /// replies, as on TCP the bytes before a FIN are served.
    func testCommandsJustBeforeACloseFrameAreServed() throws {
        let (daemon, port) = try startWebSocketDaemon()
        let subscriber = try connect(daemon, "tcp subscriber")
        try create(subscriber, "LAST")
        try subscribe(subscriber, "LAST")
        let raw = try RawWebSocket.upgraded(port: port, path: Self.path, label: "publish and close")
        try raw.send(
            RawWebSocket.frame(RawWebSocket.binary, Array("PUB LAST 5\nhello\n".utf8))
                + RawWebSocket.frame(RawWebSocket.close, [0x03, 0xE8]))
        XCTAssertEqual(try raw.readReplies(), "+OK 1\n")
        XCTAssertEqual(try raw.closeCode(), 1000)
        XCTAssertEqual(try subscriber.nextMessage().payload, Array("hello".utf8))
    }

    /// A frame header sent in part and left there is a command not finished: `command_timeout` ends it.
    func testAFrameHeaderLeftHalfWayIsEndedByCommandTimeout() throws {
        let (_, port) = try startWebSocketDaemon(DaemonConfig(commandTimeout: 1))
        let raw = try RawWebSocket.upgraded(port: port, path: Self.path, label: "half a header")
        try raw.send([0x82])
        XCTAssertTrue(try raw.readReplies().hasPrefix("-ERR "), "told why")
        XCTAssertEqual(try raw.closeCode(), 1008)
    }

    func testPingPongAndTheClientsCloseByHand() throws {
        let (_, port) = try startWebSocketDaemon()
        let raw = try RawWebSocket.upgraded(port: port, path: Self.path, label: "by hand")
        let payload: [UInt8] = [0x00, 0xFF, 0x0A, 0x61]
        try raw.send(RawWebSocket.frame(RawWebSocket.ping, payload))
        XCTAssertEqual(try raw.readFrame(), .init(opcode: RawWebSocket.pong, payload: payload))
        // A ping between the fragments of a message is answered at once; the message's command runs at its end.
        try raw.send(RawWebSocket.frame(RawWebSocket.binary, Array("PI".utf8), fin: false))
        try raw.send(RawWebSocket.frame(RawWebSocket.ping, [0x01]))
        XCTAssertEqual(try raw.readFrame(), .init(opcode: RawWebSocket.pong, payload: [0x01]))
        try raw.send(RawWebSocket.frame(RawWebSocket.continuation, Array("NG\n".utf8)))
        XCTAssertEqual(try raw.readReplies(), "+PONG\n")
        try raw.send(RawWebSocket.frame(RawWebSocket.close, [0x03, 0xE8]))
        XCTAssertEqual(try raw.closeCode(), 1000, "the client's close 1000 echoed")
    }

    /// QUIT's `+OK bye` goes out before the close frame: after its close frame an endpoint sends no data (RFC 6455
    /// section 5.5.1), so a client drops whatever follows it.
    func testQuitIsAnsweredBeforeTheCloseFrame() throws {
        let (_, port) = try startWebSocketDaemon()
        let raw = try RawWebSocket.upgraded(port: port, path: Self.path, label: "quitting by hand")
        try raw.sendCommands("QUIT\n")
        XCTAssertEqual(try raw.readReplies(), "+OK bye\n")
        XCTAssertEqual(try raw.closeCode(), 1000)
    }
}
