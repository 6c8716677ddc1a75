import Foundation
import XCTest

/// `subctl listen`: --count, --from, --json, several patterns, SIGTERM.
final class SubctlListenTests: IntegrationTestCase {
    func testListenCountExitsZeroAfterThatManyMessages() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["C"]))
        let listener = try listen(daemon, ["C"], extra: ["--count", "2"])
        let publisher = try connect(daemon, "publisher")
        for text in ["m1", "m2", "m3"] { XCTAssertEqual(try publisher.command("SEND C \(text)").errorCode, nil) }
        XCTAssertEqual(listener.waitForExit(), 0, "stderr: \(listener.stderr)")
        listener.child.stdout.waitForEnd(timeout: 5)
        XCTAssertEqual(listener.child.stdout.text, "m1\nm2\n", "exactly the first two messages")
    }

    func testListenPrintsEachPayloadFollowedByLF() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["P"]))
        let listener = try listen(daemon, ["P"])
        let publisher = try connect(daemon, "publisher")
        let payloads: [[UInt8]] = [Array("first".utf8), [], [0, 0x0A, 0xFF], Array("last".utf8)]
        for payload in payloads { XCTAssertEqual(try publisher.pub("P", payload), .ok("1")) }
        let expected: [UInt8] = payloads.flatMap { $0 + [UInt8(0x0A)] }
        XCTAssertEqual(try listener.readBytes(expected.count), expected)
        XCTAssertEqual(listener.stop(), 0)
    }

    func testListenToSeveralPatternsNamesThemAll() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["A", "B.x"]))
        let listener = try listen(daemon, ["A", "B.*"])
        XCTAssertTrue(listener.stderr.contains("subctl: listening on A, B.*\n"), listener.stderr)
        let publisher = try connect(daemon, "publisher")
        XCTAssertEqual(try publisher.command("SEND B.x bx"), .ok("1"))
        XCTAssertEqual(try publisher.command("SEND A a"), .ok("1"))
        XCTAssertEqual(try listener.readTextLine(), "bx")
        XCTAssertEqual(try listener.readTextLine(), "a")
        XCTAssertEqual(listener.stop(), 0)
    }

    func testListenFromReceivesOnlyThatPublisher() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["F"]))
        let listener = try listen(daemon, ["F"], extra: ["--from", "alice", "--count", "1"])
        let fromBob = try subctl(daemon, "publish", ["--name", "bob", "F", "from bob"])
        XCTAssertEqual(fromBob.lines, ["published to 0 receivers"], "\(fromBob)")
        let fromAlice = try subctl(daemon, "publish", ["--name", "alice", "F", "from alice"])
        XCTAssertEqual(fromAlice.lines, ["published to 1 receiver"], "\(fromAlice)")
        XCTAssertEqual(listener.waitForExit(), 0, "stderr: \(listener.stderr)")
        listener.child.stdout.waitForEnd(timeout: 5)
        XCTAssertEqual(listener.child.stdout.text, "from alice\n")
    }

    func testListenJsonPrintsOneObjectPerMessage() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["SCIENCE"]))
        let listener = try listen(daemon, ["SCIENCE"], extra: ["--json"])
        let alice = try connect(daemon, "alice")
        _ = try alice.command("HELLO name=alice")
        let anonymous = try connect(daemon, "anonymous")
        let before = Date()
        XCTAssertEqual(try alice.command("SEND SCIENCE V1.0"), .ok("1"))
        XCTAssertEqual(try anonymous.command("SEND SCIENCE \"quoted\" \\ ü"), .ok("1"))
        XCTAssertEqual(try anonymous.pub("SCIENCE", [0xFF, 0xFE, 0x00]), .ok("1"))

        let first = try jsonObject(try listener.readLine())
        XCTAssertEqual(first["number"] as? String, "SCIENCE")
        XCTAssertEqual(first["payload"] as? String, "V1.0")
        XCTAssertEqual(first["from"] as? String, "alice")
        XCTAssertNil(first["payload_base64"])
        let stamp = try XCTUnwrap(first["received_at"] as? String, "received_at")
        XCTAssertNotNil(
            stamp.wholeMatch(of: /[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z/),
            "received_at '\(stamp)' is not ISO-8601 UTC with milliseconds")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: stamp) {
            XCTAssertEqual(date.timeIntervalSince(before), 0, accuracy: 60, "received_at is now")
        } else {
            XCTFail("received_at '\(stamp)' does not parse")
        }

        let second = try jsonObject(try listener.readLine())
        XCTAssertEqual(second["payload"] as? String, "\"quoted\" \\ ü")
        XCTAssertTrue(second["from"] is NSNull, "from is null without HELLO name=: \(second)")

        let third = try jsonObject(try listener.readLine())
        XCTAssertNil(third["payload"], "a payload that is not UTF-8 has no 'payload'")
        XCTAssertEqual(third["payload_base64"] as? String, Data([0xFF, 0xFE, 0x00]).base64EncodedString())
        XCTAssertEqual(listener.stop(), 0)
    }

    private func jsonObject(_ line: [UInt8]) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(line), options: [.fragmentsAllowed])
        return try XCTUnwrap(object as? [String: Any], "not a JSON object: \(describeBytes(line))")
    }

    func testListenExitsZeroOnSigterm() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["T"]))
        let listener = try listen(daemon, ["T"])
        XCTAssertEqual(listener.stop(), 0, "stderr: \(listener.stderr)")
        let publisher = try connect(daemon, "publisher")
        try eventually("the listener's session ended") { try listCounts(publisher)["T"] == 0 }
    }
}

/// Regression: `subctl listen X | head -n 1` never ended: SIGPIPE is ignored and failed writes went unnoticed.
final class SubctlListenPipeTests: IntegrationTestCase {
    func testListenEndsWhenItsReaderGoesAway() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["H"]))
        let publisher = try connect(daemon, "publisher")
        let subctl = try BinaryLocator.executable("subctl").path
        let shell = try ChildProcess(
            executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: ["-c", "'\(subctl)' listen H --server \(daemon.server) | head -n 1"],
            environment: ["SUBD_SERVER": nil], label: "listen | head")
        defer { shell.kill9IfRunning() }
        try shell.stderr.waitFor(substring: "subctl: listening on", timeout: 10)
        XCTAssertEqual(try publisher.command("SEND H first"), .ok("1"))
        XCTAssertEqual(try shell.stdout.readLine(timeout: 10), Array("first".utf8))
        // head has exited; the next writes fail and subctl must go, leaving no subscriber behind.
        var gone = false
        for index in 0..<100 where !gone {
            _ = try publisher.command("SEND H more \(index)")
            gone = try listCounts(publisher)["H"] == 0
            if !gone { Thread.sleep(forTimeInterval: 0.05) }
        }
        XCTAssertTrue(gone, "subctl listen kept running after its stdout reader exited")
        XCTAssertEqual(shell.waitForExit(timeout: 10), 0)
    }
}

/// Regression: a listener whose stdout is not read buffered every message in memory without bound; now it stops
/// reading the socket, the backlog builds up at subd, and subd cuts it off at max_pending.
final class SubctlListenBacklogTests: IntegrationTestCase {
    func testListenerWithAStuckReaderStaysBoundedAndIsCutOff() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["M"], maxPayload: 65_536, maxPending: 4 << 20))
        let publisher = try connect(daemon, "publisher", timeout: 30)
        let subctl = try BinaryLocator.executable("subctl").path
        let shell = try ChildProcess(
            executable: URL(fileURLWithPath: "/bin/sh"),
            // A reader that takes nothing; its own output goes nowhere, so it holds none of our pipes open.
            arguments: ["-c", "'\(subctl)' listen M --server \(daemon.server) | sleep 30.25 >/dev/null 2>&1"],
            environment: ["SUBD_SERVER": nil], label: "listen | sleep")
        defer { shell.kill9IfRunning() }
        try shell.stderr.waitFor(substring: "subctl: listening on", timeout: 10)
        let listener = try XCTUnwrap(processID(commandLineContaining: "listen M --server \(daemon.server)"))
        defer { kill(listener, SIGKILL) }
        let reader = try processID(commandLineContaining: "sleep 30.25")
        defer { if let reader { kill(reader, SIGKILL) } }

        // 96 MB for a reader that takes nothing.
        let payload = [UInt8](repeating: UInt8(ascii: "p"), count: 32_768)
        var cut = false
        for _ in 0..<(3_000 / 50) where !cut {
            var batch: [UInt8] = []
            for _ in 0..<50 { batch += Array("PUB M \(payload.count)\n".utf8) + payload + [0x0A] }
            try publisher.send(batch)
            for _ in 0..<50 { _ = try publisher.readReply() }
            cut = try stats(publisher)["slow_consumers"] == "1"
        }
        XCTAssertTrue(cut, "subd never cut the stuck listener off")
        let resident = try residentBytes(of: listener)
        XCTAssertLessThan(resident, 48 << 20, "subctl listen holds \(resident) bytes for a reader that takes nothing")
    }

    private func processID(commandLineContaining needle: String) throws -> Int32? {
        for entry in try FileManager.default.contentsOfDirectory(atPath: "/proc") {
            guard let pid = Int32(entry),
                let raw = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline")
            else { continue }
            let line = String(decoding: raw.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            if line.contains(needle) && !line.hasPrefix("/bin/sh") { return pid }
        }
        return nil
    }
}

/// `subctl listen --raw` and `subctl publish --count/--interval`.
final class SubctlRawAndCountTests: IntegrationTestCase {
    /// --raw writes each payload's bytes exactly: no LF added, no info line.
    func testListenRawWritesPayloadsExactly() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["R"]))
        let listener = try listen(daemon, ["R"], extra: ["--raw"])
        let publisher = try connect(daemon, "publisher")
        let payloads: [[UInt8]] = [Array("ab".utf8), [], [0, 0x0A, 0xFF], Array("cd".utf8)]
        for payload in payloads { XCTAssertEqual(try publisher.pub("R", payload), .ok("1")) }
        try publisher.send("PUB R 2 unit=EUR\nef\n")
        XCTAssertEqual(try publisher.readReply(), .ok("1"))
        let expected = payloads.flatMap { $0 } + Array("ef".utf8)
        XCTAssertEqual(try listener.readBytes(expected.count), expected)
        XCTAssertEqual(listener.stop(), 0)
        listener.child.stdout.waitForEnd(timeout: 5)
        XCTAssertEqual(listener.child.stdout.allBytes, expected, "nothing after the last payload")
    }

    func testListenRawAndJsonTogetherIsAUsageError() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["R"]))
        let result = try subctl(daemon, "listen", ["R", "--raw", "--json"])
        XCTAssertEqual(result.status, 64, "\(result)")
    }

    /// --count N publishes the message N times (pipelined) and counts the deliveries.
    func testPublishCountSendsTheMessageThatManyTimes() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["L"]))
        let listener = try listen(daemon, ["L"], extra: ["--count", "2500"])
        let result = try subctl(daemon, "publish", ["L", "tick", "--count", "2500"])
        XCTAssertEqual(result.lines, ["published 2500 messages (2500 deliveries)"], "\(result)")
        XCTAssertEqual(listener.waitForExit(), 0, "stderr: \(listener.stderr)")
        listener.child.stdout.waitForEnd(timeout: 5)
        XCTAssertEqual(listener.child.stdout.text, String(repeating: "tick\n", count: 2500))
    }

    /// --interval spaces them out: 3 messages 0.2 s apart take at least 0.4 s.
    func testPublishIntervalWaitsBetweenMessages() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["I"]))
        let start = Date()
        let result = try subctl(daemon, "publish", ["I", "x", "--count", "3", "--interval", "0.2"])
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.4)
        XCTAssertEqual(result.lines, ["published 3 messages (0 deliveries)"], "\(result)")
        for arguments in [
            ["I", "x", "--count", "0"], ["I", "x", "--interval", "1"], ["I", "--lines", "--count", "2"],
        ] {
            XCTAssertEqual(try subctl(daemon, "publish", arguments).status, 64, "\(arguments)")
        }
    }
}
