import Foundation
import Glibc
import XCTest

/// subd's liveness timeouts (issue 13), each seen closing a connection or seen leaving one alone:
/// `command_timeout` (a started command that stops making progress), `auth_timeout` (a connection that never
/// authenticates) and TCP keepalive (a peer whose path died without a FIN or RST). A timeout close is graceful:
/// `-ERR LIMIT ...`, then EOF. Timeouts are checked 4 times a second; these tests check that nothing closes before
/// its timeout, and give the close itself a receive deadline of several seconds (a loaded machine may starve subd),
/// still well short of the defaults (command_timeout 60 s, auth_timeout 10 s) a setting that did not apply would
/// leave in force.
final class LivenessTests: IntegrationTestCase {
    private static let token = "s3cret"

    // MARK: - command_timeout

    /// A client that sends `PIN` (no LF) and then nothing gets `-ERR LIMIT ... command_timeout ...` no sooner than
    /// the 1 s timeout, then EOF, within 10 s; STATS closed_command_timeout counts it and the session is released.
    func testIncompleteCommandIsClosedAfterCommandTimeout() throws {
        let daemon = try startDaemon(DaemonConfig(commandTimeout: 1))
        let checker = try connect(daemon, "checker")
        let before = try stats(checker)
        let stalled = try connect(daemon, "client with an incomplete command", timeout: 10)
        assertOpen(stalled)

        let started = Date()
        try stalled.send("PIN")
        let reply = try stalled.readReply()
        let waited = Date().timeIntervalSince(started)
        assertTimeoutError(reply, key: "command_timeout", "PIN without LF, command_timeout 1")
        XCTAssertGreaterThanOrEqual(waited, 0.9, "closed \(waited) s after the last byte, before command_timeout 1")
        XCTAssertNoThrow(try stalled.expectClosed(), "EOF after the -ERR line")
        stalled.close()

        assertCounter("closed_command_timeout", grewBy: 1, from: before, to: try stats(checker), "one stalled command")
        try eventually("STATS connections back to 1 (only the checker)") {
            try stats(checker)["connections"] == "1"
        }
    }

    /// A client that types a long `PING xxx...` one byte every 0.3 s for 8 s (each gap far under command_timeout 4,
    /// so a starved test or subd does not stretch one past it; the whole command twice over it) is not closed, and
    /// gets its PONG once the LF comes.
    func testCommandThatKeepsMakingProgressIsNotClosed() throws {
        let daemon = try startDaemon(DaemonConfig(commandTimeout: 4))
        let typist = try connect(daemon, "slow typist")
        try typist.send("PING ")
        var text = ""
        let started = Date()
        while Date().timeIntervalSince(started) < 8 {
            Thread.sleep(forTimeInterval: 0.3)
            try typist.send("x")
            text += "x"
        }
        try typist.send("\n")
        XCTAssertEqual(try typist.readReply(), .status("PONG \(text)"), "a command still making progress")
        assertOpen(typist, "after the slow command")
    }

    /// Bytes that came in time while subd was not running (SIGSTOP: what a starved daemon on a loaded machine
    /// lives through) are read before the timeout is judged: after SIGCONT the quarter-second check and the socket's
    /// bytes are both due, and the check must not close a session whose rest of a command is waiting in the kernel.
    /// Three rounds, each past command_timeout 1 while stopped.
    func testACommandCompletedWhileSubdWasStoppedIsReadBeforeTheTimeout() throws {
        let daemon = try startDaemon(DaemonConfig(commandTimeout: 1))
        for round in 0..<3 {
            let typist = try connect(daemon, "typist \(round)", timeout: 10)
            XCTAssertEqual(try typist.command("PING"), .status("PONG"))
            try typist.send("PING ")
            Thread.sleep(forTimeInterval: 0.3)  // "PING " read: a command started
            daemon.child.stop()
            try typist.send("round-\(round)\n")
            Thread.sleep(forTimeInterval: 1.6)
            daemon.child.send(signal: SIGCONT)
            XCTAssertEqual(try typist.readReply(), .status("PONG round-\(round)"), "round \(round)")
            typist.close()
        }
    }

    /// Idle connections are never closed by command_timeout: one whose last command was complete and one that
    /// never sent a byte both still answer PING after 2.5 s (command_timeout 1); closed_command_timeout stays.
    func testIdleConnectionIsNotClosedByCommandTimeout() throws {
        let daemon = try startDaemon(DaemonConfig(commandTimeout: 1))
        let checker = try connect(daemon, "checker")
        let before = try stats(checker)
        let idle = try connect(daemon, "idle after a command")
        assertOpen(idle)
        let silent = try connect(daemon, "silent since it connected")
        Thread.sleep(forTimeInterval: 2.5)
        assertOpen(idle, "idle with no partial command, 2.5 s with command_timeout 1")
        assertOpen(silent, "silent since connecting, 2.5 s with command_timeout 1")
        assertCounter("closed_command_timeout", grewBy: 0, from: before, to: try stats(checker), "idle connections")
    }

    /// A reload (new file, SIGHUP) that shortens command_timeout from 30 s to 1 s applies to sessions already open:
    /// one whose partial command is already 1.5 s old is closed, and one that starts a partial command after the
    /// reload is closed after the new 1 s (each within 10 s, far from the 30 s in force before).
    func testReloadAppliesNewCommandTimeoutToOpenSessions() throws {
        let config = DaemonConfig(commandTimeout: 30)
        let daemon = try startDaemon(config)
        let early = try connect(daemon, "partial command before the reload", timeout: 10)
        let later = try connect(daemon, "partial command after the reload", timeout: 10)
        assertOpen(early)
        assertOpen(later)
        try early.send("PIN")
        Thread.sleep(forTimeInterval: 1.5)  // over the coming 1 s, well within the 30 s in force

        var reloaded = config
        reloaded.commandTimeout = 1
        try reloaded.yaml.write(to: daemon.configFile, atomically: true, encoding: .utf8)
        daemon.child.send(signal: SIGHUP)
        try daemon.child.stderr.waitFor(substring: "configuration reloaded", timeout: 5)
        try later.send("PIN")

        for client in [early, later] {
            do {
                assertTimeoutError(try client.readReply(), key: "command_timeout", "\(client.label), reloaded to 1 s")
                XCTAssertNoThrow(try client.expectClosed(), "\(client.label): EOF after the -ERR line")
            } catch {
                XCTFail("\(client.label): not closed by the reloaded command_timeout: \(error)")
            }
        }
    }

    // MARK: - auth_timeout

    /// With auth_token set and auth_timeout 3 (room for the other clients' HELLO on a loaded machine), a client that
    /// never authenticates (its PING is answered) gets `-ERR LIMIT ... auth_timeout ...` no sooner than 3 s (and
    /// within 8 s: before the default 10 s), then EOF; an authenticated client is still open 6 s after it connected;
    /// STATS closed_auth_timeout (read by an authenticated client) counts one.
    func testUnauthenticatedClientIsClosedAfterAuthTimeoutAndAuthenticatedOneStays() throws {
        let daemon = try startDaemon(DaemonConfig(authTimeout: 3, extraLines: ["auth_token: \"\(Self.token)\""]))
        let checker = try connect(daemon, "authenticated checker")
        authenticate(checker)
        let before = try stats(checker)
        let member = try connect(daemon, "authenticated client")
        let memberConnected = Date()
        authenticate(member)

        let stranger = try connect(daemon, "unauthenticated client", timeout: 8)
        let started = Date()
        XCTAssertEqual(try stranger.command("PING"), .status("PONG"), "PING needs no token")
        let reply = try stranger.readReply()
        let waited = Date().timeIntervalSince(started)
        assertTimeoutError(reply, key: "auth_timeout", "never authenticated, auth_timeout 3")
        XCTAssertGreaterThanOrEqual(waited, 2.9, "closed \(waited) s after connecting, before auth_timeout 3")
        XCTAssertNoThrow(try stranger.expectClosed(), "EOF after the -ERR line")
        stranger.close()

        Thread.sleep(forTimeInterval: max(0, 6 - Date().timeIntervalSince(memberConnected)))
        assertOpen(member, "authenticated, 6 s after connecting with auth_timeout 3")
        assertCounter("closed_auth_timeout", grewBy: 1, from: before, to: try stats(checker), "one stranger")
    }

    /// Without auth_token, auth_timeout does nothing: a client that sends nothing is still open after 2.5 s with
    /// auth_timeout 1, and closed_auth_timeout stays 0.
    func testAuthTimeoutDoesNothingWithoutAuthToken() throws {
        let daemon = try startDaemon(DaemonConfig(authTimeout: 1))
        let checker = try connect(daemon, "checker")
        let before = try stats(checker)
        let silent = try connect(daemon, "silent client")
        Thread.sleep(forTimeInterval: 2.5)
        assertOpen(silent, "no auth_token, 2.5 s with auth_timeout 1")
        assertCounter("closed_auth_timeout", grewBy: 0, from: before, to: try stats(checker), "no auth_token")
    }

    // MARK: - TCP keepalive

    /// With tcp_keepalive_idle 1, `ss -tno` shows a keepalive timer on subd's side of an accepted connection, due
    /// within 2 s (the configured 1 s idle or interval, not the 60 s default).
    func testAcceptedConnectionHasTheConfiguredKeepaliveTimer() throws {
        let daemon = try startDaemon(
            DaemonConfig(tcpKeepaliveIdle: 1, tcpKeepaliveInterval: 1, tcpKeepaliveCount: 2))
        let client = try connect(daemon)
        assertOpen(client)
        var timer: SocketTimer?
        // Right after a reply the timer may be the retransmit timer ("on") until the client's ACK comes.
        try eventually("ss shows a keepalive timer on subd's side of port \(daemon.port)", timeout: 3) {
            timer = try subdSideTimer(port: daemon.port)
            return timer?.kind == "keepalive"
        }
        guard let timer, timer.kind == "keepalive" else {
            return XCTFail("the last timer ss showed: \(String(describing: timer))")
        }
        XCTAssertLessThanOrEqual(timer.seconds, 2, "keepalive due in \(timer.text): not tcp_keepalive_idle 1")
    }

    /// A reload applies new keepalive settings to connections already open: idle 300 at the start (the timer is
    /// minutes away), idle 1 after SIGHUP (due within 2 s on the same connection).
    func testReloadAppliesNewKeepaliveToOpenConnections() throws {
        let config = DaemonConfig(tcpKeepaliveIdle: 300, tcpKeepaliveInterval: 1, tcpKeepaliveCount: 2)
        let daemon = try startDaemon(config)
        let client = try connect(daemon)
        assertOpen(client)
        var timer: SocketTimer?
        try eventually("a keepalive timer minutes away", timeout: 3) {
            timer = try subdSideTimer(port: daemon.port)
            return timer?.kind == "keepalive"
        }
        XCTAssertGreaterThan(timer?.seconds ?? 0, 60, "before the reload: \(String(describing: timer))")

        var reloaded = config
        reloaded.tcpKeepaliveIdle = 1
        try reloaded.yaml.write(to: daemon.configFile, atomically: true, encoding: .utf8)
        daemon.child.send(signal: SIGHUP)
        try daemon.child.stderr.waitFor(substring: "configuration reloaded", timeout: 5)
        try eventually("the open connection's keepalive is due within 2 s after the reload", timeout: 3) {
            timer = try subdSideTimer(port: daemon.port)
            return timer?.kind == "keepalive" && timer!.seconds <= 2
        }
    }

    /// With tcp_keepalive_idle 0, TCP keepalive is off: `ss -tno` shows no keepalive timer on subd's side of an
    /// accepted connection (checked a few times over half a second).
    func testKeepaliveIdleZeroTurnsKeepaliveOff() throws {
        let daemon = try startDaemon(DaemonConfig(tcpKeepaliveIdle: 0))
        let client = try connect(daemon)
        assertOpen(client)
        for _ in 0..<5 {
            let timer = try subdSideTimer(port: daemon.port)
            XCTAssertNotEqual(timer?.kind, "keepalive", "tcp_keepalive_idle 0, yet ss shows \(timer?.text ?? "")")
            Thread.sleep(forTimeInterval: 0.1)
        }
    }

    /// A subscriber in another network namespace (over a veth pair) whose link goes down, so no FIN or RST ever
    /// comes: with keepalive idle 1 s, interval 1 s, count 2, subd closes the session within 6 s, its subscription
    /// is gone, and STATS closed_keepalive counts it. Before the cut, probes that are answered keep it open (3.5 s,
    /// then a message still reaches it).
    func testKeepaliveClosesSessionWhosePeerVanished() throws {
        try checkVanishedPeer(withMessageInFlight: false)
    }

    /// The same, but a message is published to the subscriber after its link died: its bytes stay unacknowledged,
    /// and TCP keepalive does not probe a connection with data in flight (it would wait for retransmissions to give
    /// up, about 15 minutes). TCP_USER_TIMEOUT, set to idle + interval x count, closes it in the same time.
    func testAVanishedPeerWithUnacknowledgedOutputIsClosedInTheSameTime() throws {
        try checkVanishedPeer(withMessageInFlight: true)
    }

    private func checkVanishedPeer(withMessageInFlight: Bool) throws {
        guard geteuid() == 0 else { throw XCTSkip("a network namespace and a veth pair need root") }
        let namespace = try NetworkNamespace()
        defer { namespace.remove() }
        let daemon = try startDaemon(
            DaemonConfig(numbers: ["K"], tcpKeepaliveIdle: 1, tcpKeepaliveInterval: 1, tcpKeepaliveCount: 2),
            extraArguments: ["--listen", "\(namespace.hostAddress):0"])
        let port = try listeningPort(of: daemon, on: namespace.hostAddress)
        let checker = try connect(daemon, "checker")
        let before = try stats(checker)

        let subctl = try BinaryLocator.executable("subctl").path
        let remote = try ChildProcess(
            executable: URL(fileURLWithPath: "/usr/bin/env"),
            arguments: namespace.execPrefix + [subctl, "listen", "K", "--server", "\(namespace.hostAddress):\(port)"],
            environment: ["SUBD_SERVER": nil], label: "subctl listen in \(namespace.name)")
        defer { remote.kill9IfRunning() }
        try remote.stderr.waitFor(substring: "subctl: listening on", timeout: 10)
        XCTAssertEqual(try stats(checker)["connections"], "2", "the checker and the subscriber in the namespace")

        Thread.sleep(forTimeInterval: 3.5)  // longer than idle + count x interval: answered probes close nothing
        XCTAssertEqual(try checker.command("SEND K alive"), .ok("1"), "the subscriber answered the probes")
        XCTAssertEqual(String(decoding: try remote.stdout.readLine(timeout: 5), as: UTF8.self), "alive")

        try namespace.cutLink()
        if withMessageInFlight {
            XCTAssertEqual(try checker.command("SEND K unacknowledged"), .ok("1"), "queued for the vanished peer")
        }
        try eventually("subd closes the session whose peer stopped answering keepalive probes", timeout: 6) {
            try stats(checker)["connections"] == "1"
        }
        let after = try stats(checker)
        XCTAssertEqual(after["subscriptions"], "0", "the vanished subscriber's subscription is gone")
        XCTAssertEqual(try checker.command("SEND K gone"), .ok("0"), "the vanished subscriber is not counted")
        assertCounter("closed_keepalive", grewBy: 1, from: before, to: after, "one peer that vanished")
    }

    // MARK: - Helpers

    /// Asserts `-ERR LIMIT <text>` whose text names `key` (e.g. `command_timeout`), the timeout that closed it.
    private func assertTimeoutError(
        _ reply: Reply, key: String, _ context: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        assertError(reply, "LIMIT", context, file: file, line: line)
        if case .error(_, let message) = reply {
            XCTAssertTrue(
                message.contains(key), "\(context): '\(message)' does not name \(key)", file: file, line: line)
        }
    }

    /// Sends `HELLO token=<the configured secret>` and asserts it is accepted.
    private func authenticate(_ client: LineClient, file: StaticString = #filePath, line: UInt = #line) {
        let reply = try? client.command("HELLO token=\(Self.token)")
        guard case .status(let text)? = reply, text.hasPrefix("OK subd ") else {
            let got = String(describing: reply)
            return XCTFail("\(client.label): HELLO with the token got \(got)", file: file, line: line)
        }
    }

    /// The port subd logged for its TCP listener on `host` (`listening on tcp HOST:PORT`).
    private func listeningPort(of daemon: Daemon, on host: String) throws -> UInt16 {
        let marker = "listening on tcp \(host):"
        return try daemon.child.stderr.waitFor("'\(marker)PORT'", timeout: 10) { text in
            guard let range = text.range(of: marker) else { return nil }
            return UInt16(text[range.upperBound...].prefix { $0.isASCII && $0.isNumber })
        }
    }

    /// The timer `ss -tno` shows on subd's side (local port `port`) of its one established connection; nil when it
    /// shows none. Fails when ss does not show exactly one such connection.
    private func subdSideTimer(port: UInt16, file: StaticString = #filePath, line: UInt = #line) throws
        -> SocketTimer?
    {
        let output = try IPRoute2.run(["ss", "-tnoH", "state", "established", "( sport = :\(port) )"])
        let lines = output.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        guard lines.count == 1 else {
            XCTFail(
                "ss shows \(lines.count) established sockets on port \(port), not 1:\n\(output)",
                file: file, line: line)
            return nil
        }
        return SocketTimer(ssLine: String(lines[0]))
    }
}

/// The `timer:(KIND,TIME,RETRIES)` field of an `ss -o` line, e.g. `timer:(keepalive,842ms,0)`.
struct SocketTimer: CustomStringConvertible {
    /// `keepalive`, `on` (retransmit), `persist`, `timewait`...
    var kind: String
    /// The time until it fires as ss prints it: `842ms`, `1.234ms` (1.234 s), `59sec`, `1min`...
    var text: String

    /// The timer of `line`, nil when the line has none.
    init?(ssLine line: String) {
        guard let start = line.range(of: "timer:(") else { return nil }
        let fields = line[start.upperBound...].prefix { $0 != ")" }.split(separator: ",")
        guard fields.count >= 2 else { return nil }
        kind = String(fields[0])
        text = String(fields[1])
    }

    /// `text` in seconds (ss writes 1.5 s as `1.500ms` and 842 ms as `842ms`); anything with minutes is 60 or more.
    var seconds: Double {
        if text.contains("min") { return (Double(text.prefix { $0.isNumber }) ?? 1) * 60 }
        if text.hasSuffix("sec") { return Double(text.dropLast(3)) ?? .infinity }
        guard text.hasSuffix("ms") else { return .infinity }
        let number = text.dropLast(2)
        return number.contains(".") ? Double(number) ?? .infinity : (Double(number) ?? .infinity) / 1000
    }

    var description: String { "timer:(\(kind),\(text))" }
}
