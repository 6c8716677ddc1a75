import Foundation
import Glibc
import XCTest

/// subd as a `Type=notify` service: the real subd with `NOTIFY_SOCKET` pointing at a datagram socket the test owns.
final class SystemdNotifyTests: IntegrationTestCase {
    /// The status line's shape: `2 connections, 1 number, 1 subscription; 50 msgs/s in, 50 msgs/s out`.
    private static var statusPattern: Regex<(Substring, Substring, Substring, Substring, Substring, Substring)> {
        #/^([0-9]+) connections?, ([0-9]+) numbers?, ([0-9]+) subscriptions?; ([0-9]+) msgs/s in, ([0-9]+) msgs/s out$/#
    }

    func testReadyArrivesOnceEveryListenerAcceptsAndTheNumbersExist() throws {
        let notify = try NotifySocket()
        // Not through the harness, which waits for the log: here READY=1 alone says when to connect.
        let port = try TestAddress.freeLoopbackPort()
        let directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("subd-ready-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("subd.yaml")
        try DaemonConfig(numbers: ["A", "B.c"]).yaml.write(to: config, atomically: true, encoding: .utf8)
        let unixPath = directory.appendingPathComponent("subd.sock").path
        let child = try ChildProcess(
            executable: try BinaryLocator.executable("subd"),
            arguments: ["--config", config.path, "--listen", "127.0.0.1:\(port)", "--unix", unixPath],
            environment: Daemon.environment(notify.environment), label: "subd"
        )
        defer { child.kill9IfRunning() }

        let first = try XCTUnwrap(try notify.next(timeout: 10), "no notification at all; log:\n\(child.stderr.text)")
        XCTAssertEqual(first.values["READY"], "1", "the first notification must be READY=1: \(first)")
        // At once: both listeners take connections and the configured numbers exist.
        let tcp = try LineClient.connect(port: port, label: "tcp")
        let unix = try LineClient.connect(unixPath: unixPath)
        XCTAssertEqual(try listCounts(tcp), ["A": 0, "B.c": 0])
        assertOpen(unix)
        XCTAssertEqual(first.values["STATUS"], "0 connections, 2 numbers, 0 subscriptions; 0 msgs/s in, 0 msgs/s out")

        child.send(signal: SIGTERM)
        for client in [tcp, unix] {
            try client.expectClosed()
            client.close()
        }
        XCTAssertEqual(child.waitForExit(timeout: 10), 0, child.stderr.text)
    }

    func testStatusLineCountsConnectionsNumbersSubscriptionsAndMessageRates() throws {
        let notify = try NotifySocket()
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]), environment: notify.environment)
        try notify.waitFor("READY", value: "1")
        let subscriber = try connect(daemon, "subscriber")
        let publisher = try connect(daemon, "publisher")
        try subscribe(subscriber, "N")
        // Publish right after a status line, so the next one's window holds every message.
        try waitForStatus(notify) { $0.connections == 2 }
        let count = 40
        for index in 0..<count {
            XCTAssertEqual(try publisher.pub("N", Array("m\(index)".utf8)), .ok("1"))
        }
        let busy = try waitForStatus(notify) { $0.messagesIn > 0 }
        XCTAssertEqual(busy.connections, 2)
        XCTAssertEqual(busy.numbers, 1)
        XCTAssertEqual(busy.subscriptions, 1)
        // On a loaded machine the 40 may straddle two (or more) windows: add up the rates of the consecutive lines
        // that saw messages, up to the first quiet one.
        var rates = [busy]
        while true {
            let next = try waitForStatus(notify) { _ in true }
            if next.messagesIn == 0 && next.messagesOut == 0 { break }
            rates.append(next)
        }
        let rateIn = rates.map(\.messagesIn).reduce(0, +)
        let rateOut = rates.map(\.messagesOut).reduce(0, +)
        let lines = rates.map { "\($0.messagesIn)/\($0.messagesOut)" }
        XCTAssertEqual(rateIn, rateOut, "one subscriber: as many out as in: \(lines)")
        // Over windows of about 2 s: 40 messages are between 5 and 40 per second.
        XCTAssertTrue((5...40).contains(rateIn), "rate \(rateIn) msgs/s for 40 messages: \(lines)")
        // Without WATCHDOG_USEC there is no watchdog.
        XCTAssertFalse(notify.received.contains { $0.values["WATCHDOG"] != nil }, "\(notify.received)")
    }

    func testSighupReloadsBetweenReloadingAndReadyAndTheNewSettingsApply() throws {
        let notify = try NotifySocket()
        let daemon = try startDaemon(DaemonConfig(numbers: ["A"]), environment: notify.environment)
        try notify.waitFor("READY", value: "1")
        let client = try connect(daemon, "client from before the reload")
        XCTAssertEqual(try listCounts(client), ["A": 0])
        XCTAssertFalse(daemon.log.contains("debug client connected"), "level info must hide debug lines")

        try DaemonConfig(numbers: ["A", "B"], maxPayload: 100, logLevel: "debug").yaml
            .write(to: daemon.configFile, atomically: true, encoding: .utf8)
        daemon.child.send(signal: SIGHUP)
        let reloading = try notify.waitFor("RELOADING", value: "1")
        let stamp = try XCTUnwrap(
            reloading.values["MONOTONIC_USEC"].flatMap(UInt64.init),
            "RELOADING=1 without a numeric MONOTONIC_USEC: \(reloading)")
        let now = Self.monotonicMicroseconds()
        XCTAssertLessThan(
            max(stamp, now) - min(stamp, now), 10_000_000,
            "MONOTONIC_USEC \(stamp) is not CLOCK_MONOTONIC now (\(now))")
        let ready = try notify.waitFor("READY", value: "1")
        XCTAssertGreaterThanOrEqual(ready.arrival, reloading.arrival)
        XCTAssertEqual(ready.values["STATUS"]?.contains("2 numbers"), true, "\(ready)")

        // The connection made before the reload is still served, and sees the new number and the new limit.
        XCTAssertEqual(try listCounts(client), ["A": 0, "B": 0])
        let late = try connect(daemon, "client after the reload")
        assertOpen(late)
        try daemon.child.stderr.waitFor(substring: "debug client connected", timeout: 5)
        assertError(try client.pub("A", [UInt8](repeating: 0x61, count: 200)), "TOOBIG", "max_payload 100")
    }

    func testBadConfigOnReloadIsRefusedAndTheRunningOneStays() throws {
        let notify = try NotifySocket()
        let daemon = try startDaemon(DaemonConfig(numbers: ["A"], maxNumbers: 2), environment: notify.environment)
        try notify.waitFor("READY", value: "1")
        let client = try connect(daemon)

        // A value that does not parse.
        try DaemonConfig(numbers: ["A", "B"], logLevel: "debug", extraLines: ["max_line: abc"]).yaml
            .write(to: daemon.configFile, atomically: true, encoding: .utf8)
        daemon.child.send(signal: SIGHUP)
        try notify.waitFor("RELOADING", value: "1")
        try notify.waitFor("READY", value: "1")
        try daemon.child.stderr.waitFor(substring: "reload refused", timeout: 5)
        assertOutput(daemon.child.stderr, contains: "max_line: must be a whole number, got 'abc'")
        XCTAssertEqual(try listCounts(client), ["A": 0], "nothing of the refused file may apply")

        // Numbers that would pass max_numbers: all or nothing, so not even the first new one is created.
        try DaemonConfig(numbers: ["A", "B", "C"], maxNumbers: 2).yaml
            .write(to: daemon.configFile, atomically: true, encoding: .utf8)
        daemon.child.send(signal: SIGHUP)
        try notify.waitFor("RELOADING", value: "1")
        try notify.waitFor("READY", value: "1")
        try daemon.child.stderr.waitFor(substring: "over max_numbers 2", timeout: 5)
        XCTAssertEqual(try listCounts(client), ["A": 0])

        // Still on level info, still serving.
        _ = try connect(daemon, "another")
        assertOpen(client)
        XCTAssertFalse(daemon.log.contains("debug client connected"), daemon.log)
    }

    func testSigtermSendsStoppingBeforeTheDrainAndExitsZero() throws {
        let notify = try NotifySocket()
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]), environment: notify.environment)
        try notify.waitFor("READY", value: "1")
        // A subscriber that does not read yet holds the drain open (its backlog waits in subd, up to 5 s).
        let subscriber = try connect(daemon, "subscriber", receiveBuffer: 4096)
        let publisher = try connect(daemon, "publisher")
        try subscribe(subscriber, "N")
        // More than the kernel's largest TCP send buffer, so part of it stays in subd until the subscriber reads.
        let payload = [UInt8](repeating: UInt8(ascii: "p"), count: 512 * 1024)
        let count = 2 * (try Self.largestSendBuffer()) / payload.count + 4
        for index in 0..<count { XCTAssertEqual(try publisher.pub("N", payload), .ok("1"), "PUB \(index)") }
        daemon.child.send(signal: SIGTERM)
        // STOPPING=1 comes while the drain still waits for the subscriber, not after it.
        // (Sent after the drain, it would come at the 5 s drain deadline, and the backlog read below would be cut.)
        let stopping = try notify.waitFor("STOPPING", value: "1", timeout: 10)
        XCTAssertEqual(stopping.values["STATUS"], "stopping: draining 2 connections")
        try publisher.expectClosed()
        publisher.close()
        for index in 0..<count {
            XCTAssertEqual(try subscriber.nextMessage().payload.count, payload.count, "message \(index)")
        }
        try subscriber.expectClosed()
        subscriber.close()
        XCTAssertEqual(daemon.stop(signal: nil), 0, "subd log:\n\(daemon.log)")
        XCTAssertFalse(notify.received.contains { $0.values["READY"] != nil && $0.arrival > stopping.arrival })
    }

    func testWatchdogPingsAtHalfTheInterval() throws {
        let notify = try NotifySocket()
        var environment = notify.environment
        environment["WATCHDOG_USEC"] = "600000"
        let daemon = try startDaemon(environment: environment)
        try notify.waitFor("READY", value: "1")
        // Over 15 gaps (about 4.5 s) the median shrugs off the few a starved subd stretches (each followed by a short
        // one: the timer keeps its schedule); the bounds still tell 0.3 s from the whole interval (0.6 s) or a quarter
        // of it (0.15 s).
        var pings: [ContinuousClock.Instant] = []
        while pings.count < 16 {
            pings.append(try notify.waitFor("WATCHDOG", value: "1", timeout: 5).arrival)
        }
        let gaps = zip(pings.dropFirst(), pings).map { ($0 - $1) / .seconds(1) }.sorted()
        let median = gaps[gaps.count / 2]
        XCTAssertTrue((0.2...0.5).contains(median), "WATCHDOG=1 every \(median) s, not about 0.3 s: \(gaps)")
        assertOutput(daemon.child.stderr, contains: "watchdog")
    }

    func testNoWatchdogWhenItIsForAnotherProcess() throws {
        let notify = try NotifySocket()
        var environment = notify.environment
        environment["WATCHDOG_USEC"] = "200000"
        environment["WATCHDOG_PID"] = "1"
        _ = try startDaemon(environment: environment)
        try notify.waitFor("READY", value: "1")
        XCTAssertNil(try notify.next(timeout: 0.5).flatMap { $0.values["WATCHDOG"] }, "\(notify.received)")
    }

    // MARK: Helpers

    /// A parsed status line.
    private struct Status {
        var connections, numbers, subscriptions, messagesIn, messagesOut: Int
    }

    /// Waits (up to 10 s) for a periodic `STATUS=` line that satisfies `condition`; every one must parse.
    @discardableResult
    private func waitForStatus(_ notify: NotifySocket, _ condition: (Status) -> Bool) throws -> Status {
        let deadline = Date(timeIntervalSinceNow: 10)
        while deadline.timeIntervalSinceNow > 0 {
            guard let next = try notify.next(timeout: deadline.timeIntervalSinceNow) else { break }
            guard next.values["READY"] == nil, let line = next.values["STATUS"] else { continue }
            let match = try XCTUnwrap(line.wholeMatch(of: Self.statusPattern), "malformed STATUS: \(line)")
            let status = Status(
                connections: Int(match.output.1)!, numbers: Int(match.output.2)!, subscriptions: Int(match.output.3)!,
                messagesIn: Int(match.output.4)!, messagesOut: Int(match.output.5)!
            )
            if condition(status) { return status }
        }
        throw HarnessError.timeout("no matching STATUS= line; received: \(notify.received)")
    }

    /// The most bytes the kernel may buffer for one TCP sender (the last field of net.ipv4.tcp_wmem).
    private static func largestSendBuffer() throws -> Int {
        let text = try String(contentsOfFile: "/proc/sys/net/ipv4/tcp_wmem", encoding: .utf8)
        return try XCTUnwrap(text.split(whereSeparator: \.isWhitespace).last.flatMap { Int($0) }, text)
    }

    private static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }
}
