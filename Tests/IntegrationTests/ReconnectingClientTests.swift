import Foundation
import Glibc
import SubscriptionClient
import SubscriptionWire
import XCTest

/// The library's ReconnectingClient against real subd processes that are killed (SIGKILL), stopped (SIGSTOP) and
/// started again on the same port: observations and watches go on, nothing is delivered twice, a watch reports the
/// revisions it missed, the next server of the list takes over, commands made while disconnected wait in a bounded
/// buffer, requests time out, and refusals come as typed errors.
final class ReconnectingClientTests: IntegrationTestCase {
    /// A config whose state directory (numbers and retained values survive a restart) is removed after the test.
    private func persistentConfig(numbers: [String] = []) throws -> DaemonConfig {
        let directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("subd-rc-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        return DaemonConfig(numbers: numbers, extraLines: ["state_dir: \"\(directory.path)\""])
    }

    /// A subd the test kills itself (so the teardown does not expect it to exit 0).
    private func killableDaemon(_ config: DaemonConfig) throws -> Daemon {
        let daemon = try Daemon(config: config)
        addTeardownBlock { daemon.child.kill9IfRunning() }
        return daemon
    }

    private func kill9(_ daemon: Daemon) {
        daemon.child.send(signal: SIGKILL)
        XCTAssertEqual(daemon.stop(signal: nil), 128 + SIGKILL)
    }

    private static func isDisconnected(_ event: ConnectionEvent) -> Bool {
        if case .disconnected = event { return true }
        return false
    }

    /// subd killed with SIGKILL mid-stream and started again on the same port (with its state): the observations and
    /// the watch go on; the retained value pushed again on subscribing again is not delivered twice; the revision
    /// published while the client was away is reported as a gap; a post made while disconnected goes out after the
    /// observations are back, so the client's own observation gets it.
    func testObservationsAndWatchGoOnAcrossASIGKILLedRestartWithNoRepeatAndTheGapReported() async throws {
        let config = try persistentConfig()
        let first = try killableDaemon(config)
        let port = first.port
        let setup = try LineClient.connect(port: port, label: "setup")
        XCTAssertEqual(try setup.command("CREATE NEWS"), .ok("created"))
        XCTAssertEqual(try setup.command("CREATE PRICE retain"), .ok("created"))
        XCTAssertEqual(try setup.command("CREATE STOCK retain"), .ok("created"))
        XCTAssertEqual(try setup.command("SEND STOCK 7"), .ok("0"))

        let client = try await ReconnectingClient.connect(to: endpoint(first), name: "shop", options: quickOptions)
        let events = Collector(client.events())
        let news = Collector(try await client.observe("NEWS"))
        let prices = Collector(try await client.observe("PRICE"))
        let stock = Collector(try await client.observe("STOCK"))
        let watch = Collector(try await client.watch("PRICE"))
        try await stock.wait(for: 1)
        XCTAssertEqual(try setup.command("SEND NEWS n1"), .ok("1"))
        XCTAssertEqual(try setup.command("SEND PRICE 1"), .ok("1"))
        XCTAssertEqual(try setup.command("SEND PRICE 2"), .ok("1"))
        try await news.wait(for: 1)
        try await prices.wait(for: 2)
        try await watch.wait(for: 2)
        setup.close()

        kill9(first)
        try await events.wait(until: "disconnected", Self.isDisconnected)
        // While the client is away: its own post waits in the buffer, and revisions 3 and 4 of PRICE are published on
        // another subd of the same state.
        let held = Task { try await client.post("NEWS", text: "held") }
        let elsewhere = try Daemon(config: config)
        let other = try LineClient.connect(port: elsewhere.port, label: "elsewhere")
        XCTAssertEqual(try other.command("SEND PRICE 3"), .ok("0"))
        XCTAssertEqual(try other.command("SEND PRICE 4"), .ok("0"))
        other.close()
        XCTAssertEqual(elsewhere.stop(), 0)

        let second = try startDaemon(config, extraArguments: ["--listen", "127.0.0.1:\(port)"])
        let receivers = try await held.value
        XCTAssertEqual(receivers, 1, "the held post went out once NEWS was subscribed again")
        try await events.wait(until: "connected again") { $0 == .connected(self.endpoint(first)) }
        let publisher = try connect(second, "publisher")
        XCTAssertEqual(try publisher.command("SEND NEWS n2"), .ok("1"))
        XCTAssertEqual(try publisher.command("SEND PRICE 5"), .ok("1"))
        XCTAssertEqual(try publisher.command("SEND STOCK 8"), .ok("1"))

        let newsTexts = try await news.wait(for: 3).map(\.text)
        XCTAssertEqual(newsTexts, ["n1", "held", "n2"])
        let priceRevisions = try await prices.wait(for: 4).map(\.revision)
        XCTAssertEqual(priceRevisions, [1, 2, 4, 5], "rev 2 not twice; 4 pushed on SUB")
        let stockTexts = try await stock.wait(for: 2).map(\.text)
        XCTAssertEqual(stockTexts, ["7", "8"], "7, pushed again on SUB, not twice")
        let changes = try await watch.wait(for: 4)
        XCTAssertEqual(changes.map { $0.old?.revision }, [nil, 1, 2, 4])
        XCTAssertEqual(changes.map(\.revision), [1, 2, 4, 5])
        XCTAssertEqual(changes.map(\.gap), [nil, nil, .missed(3...3), nil], "the revision missed while away")
        XCTAssertEqual(changes[2].missed, 1)
        // Nothing more comes (a repeat would come right after the SUB).
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertEqual(
            [news.received.count, prices.received.count, stock.received.count, watch.received.count], [3, 4, 2, 4])
        await client.close()
        XCTAssertEqual(events.received.last, .closed)
    }

    /// subd killed with SIGKILL while one client posts a stream of messages and another observes and watches it:
    /// across the restart, the observer gets each message at most once and in order, and the watcher's changes chain
    /// (each `old` is the previous `new`, and every revision it skipped is in a gap) up to the server's last value.
    func testAStreamAcrossASIGKILLedRestartHasNoRepeatAndEverySkippedRevisionInAGap() async throws {
        let config = try persistentConfig()
        let first = try killableDaemon(config)
        let port = first.port
        let publisher = try await ReconnectingClient.connect(to: endpoint(first), name: "feed", options: quickOptions)
        try await publisher.create("TICKS")
        try await publisher.create("LEVEL", retained: true)
        let reader = try await ReconnectingClient.connect(to: endpoint(first), options: quickOptions)
        let ticks = Collector(try await reader.observe("TICKS"))
        let levels = Collector(try await reader.watch("LEVEL"))
        let readerEvents = Collector(reader.events())
        var second: Daemon?
        for index in 1...40 {
            if index == 15 {
                kill9(first)
                second = try startDaemon(config, extraArguments: ["--listen", "127.0.0.1:\(port)"])
            }
            // A post in flight when subd died fails (connectionLost: maybe carried out); the stream goes on.
            _ = try? await publisher.post("TICKS", text: "\(index)")
            _ = try? await publisher.post("LEVEL", text: "\(index)")
        }
        XCTAssertNotNil(second)
        let last = try await publisher.value(of: "LEVEL")
        let final = try XCTUnwrap(last)
        XCTAssertEqual(final.text, "40")
        try await levels.wait(until: "the last value") { $0.new == final }
        // Ticks posted while the reader was away are lost, as for any client not connected (the publisher may be
        // back first and post all of them): once the reader reports itself connected again (after its subscriptions
        // are restored), one more tick reaches it.
        try await readerEvents.wait(until: "the reader connected again") {
            if case .connected = $0 { true } else { false }
        }
        _ = try await publisher.post("TICKS", text: "41")
        try await ticks.wait(until: "the tick after the reader came back") { $0.text == "41" }
        let numbers = ticks.received.compactMap { $0.text.flatMap(Int.init) }
        XCTAssertEqual(numbers, numbers.sorted(), "in order")
        XCTAssertEqual(Set(numbers).count, numbers.count, "none twice: \(numbers)")
        let changes = levels.received
        for (before, change) in zip(changes, changes.dropFirst()) {
            XCTAssertEqual(change.old, before.new, "each change starts from the value reported before it")
            let skipped = change.revision - before.revision - 1
            XCTAssertGreaterThanOrEqual(skipped, 0, "revisions only go up: \(changes.map(\.revision))")
            XCTAssertEqual(change.gap, skipped == 0 ? nil : .missed(before.revision + 1...change.revision - 1))
        }
        await publisher.close()
        await reader.close()
    }

    /// A list of servers: the first is down, so the second is used; when that one is killed, the client goes to the
    /// third and its observation goes on there.
    func testTheNextServerOfTheListIsUsedWhenOneIsDown() async throws {
        let gone = try Daemon()
        let down = endpoint(gone)
        XCTAssertEqual(gone.stop(), 0)
        let a = try killableDaemon(DaemonConfig(numbers: ["NEWS"]))
        let b = try startDaemon(DaemonConfig(numbers: ["NEWS"]))
        let client = try await ReconnectingClient.connect(
            to: [down, endpoint(a), endpoint(b)], options: quickOptions)
        XCTAssertEqual(client.server, endpoint(a), "the first server is down: the second is used")
        let events = Collector(client.events())
        let news = Collector(try await client.observe("NEWS"))
        let onA = try await client.post("NEWS", text: "on a")
        XCTAssertEqual(onA, 1)
        try await news.wait(for: 1)

        kill9(a)
        try await events.wait(until: "connected to b") { $0 == .connected(self.endpoint(b)) }
        XCTAssertEqual(client.server, endpoint(b))
        XCTAssertTrue(
            events.received.contains {
                if case .attemptFailed(let server, _, _) = $0 { return server == self.endpoint(a) }
                return false
            }, "the lost server was tried first: \(events.received)")
        let onB = try await client.post("NEWS", text: "on b")
        XCTAssertEqual(onB, 1)
        let newsOnBoth = try await news.wait(for: 2).map(\.text)
        XCTAssertEqual(newsOnBoth, ["on a", "on b"])
        await client.close()
    }

    /// While disconnected: a command too big for the outbound buffer is refused at once (typed); one that waits too
    /// long times out and is never sent; one that fits is sent on the next connection.
    ///
    /// The timeout is checked on a client of its own with a short request timeout (`timing`); everything that must
    /// not time out (the setup, the command that fits and waits for the restart, the overflow) runs on `client`, whose
    /// request timeout is long, so a starved subd (a restart under load) cannot fail those.
    func testCommandsMadeWhileDisconnectedWaitInABoundedBuffer() async throws {
        let config = try persistentConfig()
        let first = try killableDaemon(config)
        let port = first.port
        var options = quickOptions
        options.connectTimeout = .seconds(10)
        options.outboundBufferLimit = 64
        options.requestTimeout = .seconds(60)
        var shortOptions = options
        shortOptions.requestTimeout = .milliseconds(700)
        let client = try await ReconnectingClient.connect(to: endpoint(first), options: options)
        let timing = try await ReconnectingClient.connect(to: endpoint(first), options: shortOptions)
        let events = Collector(client.events())
        let timingEvents = Collector(timing.events())
        let created = try await client.create("PRICE", retained: true)
        XCTAssertTrue(created)
        let receivers = try await client.post("PRICE", text: "11")
        XCTAssertEqual(receivers, 0)
        kill9(first)
        try await events.wait(until: "disconnected", Self.isDisconnected)
        try await timingEvents.wait(until: "disconnected", Self.isDisconnected)

        let clock = ContinuousClock()
        let start = clock.now
        do throws(ClientError) {
            try await timing.post("PRICE", text: "99")
            XCTFail("no timeout")
        } catch .timeout(let verb, let after) {
            XCTAssertEqual(verb, "PUB")
            XCTAssertEqual(after, .milliseconds(700))
        }
        XCTAssertGreaterThanOrEqual(start.duration(to: clock.now), .milliseconds(700), "not timed out early")
        let fits = Task { try await client.post("PRICE", text: "12") }
        do throws(ClientError) {
            try await client.post("PRICE", payload: Array(repeating: 0x41, count: 100))
            XCTFail("no overflow")
        } catch .outboundBufferFull(let bytes, let limit) {
            XCTAssertEqual(limit, 64)
            XCTAssertGreaterThan(bytes, 100)
        }
        _ = try startDaemon(config, extraArguments: ["--listen", "127.0.0.1:\(port)"])
        let fitted = try await fits.value
        XCTAssertEqual(fitted, 0)
        // `timing` connects again too; had it kept the timed-out post, it would send it first on the new connection,
        // before any later command of its own. So its first `GET` answered there shows whether it did (retried: with
        // its short timeout a `GET` may time out under load, and a `GET` changes nothing).
        try await timingEvents.wait(until: "connected again", timeout: 30) {
            if case .connected = $0 { return true }
            return false
        }
        var value: RetainedValue?
        let deadline = clock.now + .seconds(30)
        while true {
            do throws(ClientError) {
                value = try await timing.value(of: "PRICE")
                break
            } catch .timeout {
                guard clock.now < deadline else { return XCTFail("no answer to GET within 30 s") }
            }
        }
        XCTAssertEqual(value?.text, "12")
        XCTAssertEqual(value?.revision, 2, "the post that timed out in the buffer was never sent")
        await timing.close()
        await client.close()
    }

    /// A subd stopped with SIGSTOP answers nothing: a command times out (typed), and so does connecting (the kernel
    /// accepts, `HELLO` gets no answer), and closing does not wait for ever for `QUIT`'s answer. Once it runs again,
    /// the late reply goes to no one and the next command gets its own.
    func testRequestsTimeOutAgainstAStoppedServer() async throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["NEWS"]))
        var options = quickOptions
        options.requestTimeout = .milliseconds(400)
        options.connectTimeout = .milliseconds(400)
        let client = try await ReconnectingClient.connect(to: endpoint(daemon), options: options)
        let other = try await ReconnectingClient.connect(to: endpoint(daemon), options: options)
        daemon.child.stop()
        defer { daemon.child.send(signal: SIGCONT) }
        let clock = ContinuousClock()
        let start = clock.now
        do throws(ClientError) {
            try await client.post("NEWS", text: "late")
            XCTFail("no timeout")
        } catch .timeout(let verb, let after) {
            XCTAssertEqual(verb, "PUB")
            XCTAssertEqual(after, .milliseconds(400))
        }
        let waited = start.duration(to: clock.now)
        XCTAssertGreaterThanOrEqual(waited, .milliseconds(400))
        XCTAssertLessThan(waited, .seconds(3))
        do throws(ClientError) {
            _ = try await ReconnectingClient.connect(to: endpoint(daemon), options: options)
            XCTFail("connected to a stopped server")
        } catch .timeout(let verb, _) {
            XCTAssertEqual(verb, "HELLO")
        }
        let closing = clock.now
        await other.close()
        XCTAssertLessThan(
            closing.duration(to: clock.now), .seconds(3), "close() does not wait for ever for QUIT's answer")
        daemon.child.send(signal: SIGCONT)
        let createdLater = try await client.create("LATER")
        XCTAssertTrue(createdLater, "the late +OK of PUB was not taken for CREATE's reply")
        await client.close()
    }

    /// The protocol's error codes as ClientError cases: DENIED for a user outside its rights, NOTFOUND, AUTH.
    func testRefusalsComeAsTypedErrors() async throws {
        let daemon = try startDaemon(try usersConfig())
        let alice = try await ReconnectingClient.connect(
            to: endpoint(daemon), name: "alice", token: "alice-pw", options: quickOptions)
        await assertThrows(.denied) { () throws(ClientError) in try await alice.post("OTHER", text: "x") }
        await assertThrows(.denied) { () throws(ClientError) in try await alice.observe("OTHER") }
        await assertThrows(.denied) { () throws(ClientError) in try await alice.create("MINE") }
        await assertThrows(.notFound) { () throws(ClientError) in try await alice.post("SCIENCE.none", text: "x") }
        await assertThrows(.notFound) { () throws(ClientError) in try await alice.observe("SCIENCE.none") }
        let inStep = try await alice.post("SCIENCE.physics", text: "x")
        XCTAssertEqual(inStep, 0, "still in step after the refusals")
        do throws(ClientError) {
            _ = try await ReconnectingClient.connect(to: endpoint(daemon), name: "alice", token: "wrong")
            XCTFail("a wrong token was taken")
        } catch .auth(let message) {
            XCTAssertFalse(message.isEmpty)
        }
        await alice.close()
    }

    private func assertThrows<T>(
        _ code: ErrorCode, file: StaticString = #filePath, line: UInt = #line,
        _ body: () async throws(ClientError) -> T
    ) async {
        do throws(ClientError) {
            _ = try await body()
            XCTFail("no \(code.rawValue) refusal", file: file, line: line)
        } catch {
            XCTAssertEqual(error.code, code, "\(error)", file: file, line: line)
            XCTAssertNotNil(error.serverMessage, file: file, line: line)
        }
    }

    /// alice may publish and subscribe below SCIENCE and nothing else.
    private func usersConfig() throws -> DaemonConfig {
        let subd = try BinaryLocator.executable("subd")
        let child = try ChildProcess(
            executable: subd, arguments: ["hash-secret"], environment: [:], stdinPipe: true, label: "subd hash-secret")
        try child.writeStdinAndClose(Array("alice-pw\n".utf8))
        XCTAssertEqual(child.waitForExit(timeout: 10), 0, child.stderr.text)
        child.stdout.waitForEnd(timeout: 5)
        let hash = child.stdout.text.trimmingCharacters(in: .whitespacesAndNewlines)
        return DaemonConfig(
            numbers: ["SCIENCE.physics", "OTHER"],
            extraLines: [
                "users:", "  - name: alice", "    secret_hash: \"\(hash)\"", "    publish: [\"SCIENCE.>\"]",
                "    subscribe: [\"SCIENCE.>\"]",
            ])
    }
}
