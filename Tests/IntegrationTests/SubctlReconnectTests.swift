import Foundation
import Glibc
import XCTest

/// `subctl listen` after losing the server: it reconnects and subscribes again by default (as `nats sub` and
/// `mosquitto_sub` do), says so on stderr, and goes on counting; `--no-reconnect` exits at the loss instead.
final class SubctlReconnectTests: IntegrationTestCase {
    /// A subd stopped with SIGTERM (its sessions are closed) and a new one started on the same port: the listener
    /// prints the messages from before and after, says it lost and regained the server, and --count spans both.
    func testListenReconnectsToARestartedServerAndGoesOnCounting() throws {
        let first = try Daemon(config: DaemonConfig(numbers: ["NEWS"]))
        let port = first.port
        let listener = try listen(first, ["NEWS"], extra: ["--count", "3"])
        let before = try LineClient.connect(port: port, label: "publisher before")
        XCTAssertEqual(try before.command("SEND NEWS one"), .ok("1"))
        XCTAssertEqual(try listener.readTextLine(), "one")
        before.close()
        XCTAssertEqual(first.stop(), 0)
        try listener.child.stderr.waitFor(
            substring: "lost the connection to 127.0.0.1:\(port); reconnecting", timeout: 10)

        let second = try startDaemon(
            DaemonConfig(numbers: ["NEWS"]), extraArguments: ["--listen", "127.0.0.1:\(port)"])
        try listener.child.stderr.waitFor(substring: "reconnected to 127.0.0.1:\(port)", timeout: 10)
        // Subscribed again once it says it listens a second time.
        _ = try listener.child.stderr.waitFor("a second 'listening on'", timeout: 10) { text in
            text.components(separatedBy: "subctl: listening on NEWS").count == 3 ? true : nil
        }
        let after = try LineClient.connect(port: port, label: "publisher after")
        XCTAssertEqual(try after.command("SEND NEWS two"), .ok("1"))
        XCTAssertEqual(try after.command("SEND NEWS three"), .ok("1"))
        XCTAssertEqual(listener.waitForExit(), 0, "--count 3 reached across the restart; stderr: \(listener.stderr)")
        listener.child.stdout.waitForEnd(timeout: 5)
        XCTAssertEqual(listener.child.stdout.text, "one\ntwo\nthree\n")
        after.close()
        _ = second
    }

    /// After the reconnection the number is not there yet (a restarted subd without state): the listener says so
    /// once and waits until it is created, then receives.
    func testListenWaitsForItsNumberAfterReconnecting() throws {
        let first = try Daemon(config: DaemonConfig(numbers: ["LATE"]))
        let port = first.port
        let listener = try listen(first, ["LATE"])
        XCTAssertEqual(first.stop(), 0)
        let second = try startDaemon(DaemonConfig(), extraArguments: ["--listen", "127.0.0.1:\(port)"])
        try listener.child.stderr.waitFor(substring: "but 'LATE' is not there; trying again until it is", timeout: 10)
        let client = try connect(second, "creator")
        XCTAssertEqual(try client.command("CREATE LATE"), .ok("created"))
        try listener.child.stderr.waitFor(substring: "reconnected to 127.0.0.1:\(port)\n", timeout: 10)
        _ = try listener.child.stderr.waitFor("a second 'listening on'", timeout: 10) { text in
            text.components(separatedBy: "subctl: listening on LATE").count == 3 ? true : nil
        }
        XCTAssertEqual(try client.command("SEND LATE here"), .ok("1"))
        XCTAssertEqual(try listener.readTextLine(), "here")
        XCTAssertEqual(listener.stop(), 0)
    }

    /// --no-reconnect: the loss ends it with exit 69 and one line.
    func testListenNoReconnectExitsAtTheLoss() throws {
        let first = try Daemon(config: DaemonConfig(numbers: ["N"]))
        let listener = try listen(first, ["N"], extra: ["--no-reconnect"])
        XCTAssertEqual(first.stop(), 0)
        XCTAssertEqual(listener.waitForExit(), 69, "stderr: \(listener.stderr)")
        XCTAssertTrue(
            listener.stderr.contains("subctl: lost the connection to 127.0.0.1:\(first.port)\n"), listener.stderr)
        XCTAssertFalse(listener.stderr.contains("reconnecting"), listener.stderr)
    }

    /// Ctrl-C while it waits to reconnect (nothing listens on the port) ends it at once with exit 0.
    func testListenStopsWhileReconnecting() throws {
        let first = try Daemon(config: DaemonConfig(numbers: ["N"]))
        let listener = try listen(first, ["N"])
        XCTAssertEqual(first.stop(), 0)
        try listener.child.stderr.waitFor(substring: "reconnecting", timeout: 10)
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertEqual(listener.stop(), 0, "stderr: \(listener.stderr)")
    }
}

/// `subctl watch` after losing the server: it resumes after the last value it printed, so the next line's OLD is
/// that value and what was published meanwhile is reported as missed.
final class SubctlWatchReconnectTests: IntegrationTestCase {
    func testWatchResumesAfterTheLastValueAcrossARestart() throws {
        let directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("subd-watch-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        let config = DaemonConfig(extraLines: ["state_dir: \"\(directory.path)\""])
        let first = try Daemon(config: config)
        let port = first.port
        let setup = try LineClient.connect(port: port, label: "setup")
        XCTAssertEqual(try setup.command("CREATE PRICE retain"), .ok("created"))
        XCTAssertEqual(try setup.command("SEND PRICE 11"), .ok("0"))
        let watcher = try Subctl.watch(server: first.server, ["PRICE"])
        defer { watcher.child.kill9IfRunning() }
        XCTAssertEqual(try watcher.readTextLine(), "(none) -> 11")
        setup.close()
        XCTAssertEqual(first.stop(), 0)
        try watcher.child.stderr.waitFor(
            substring: "lost the connection to 127.0.0.1:\(port); reconnecting", timeout: 10)

        // While it is away, two changes it cannot see (the state directory keeps the number and its revisions).
        let second = try startDaemon(config, extraArguments: ["--listen", "127.0.0.1:\(port)"])
        let publisher = try connect(second, "publisher")
        try watcher.child.stderr.waitFor(substring: "reconnected to 127.0.0.1:\(port)", timeout: 10)
        XCTAssertEqual(try publisher.command("SEND PRICE 12"), .ok("1"))
        XCTAssertEqual(try watcher.readTextLine(), "11 -> 12", "resumed after the value it printed last")
        XCTAssertEqual(watcher.stop(), 0)
    }
}
