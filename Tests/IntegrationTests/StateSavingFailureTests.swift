import Foundation
import Glibc
import XCTest

/// A `+OK` for a retained value is a promise, also when the disk fails (docs/STATE.md, "If saving fails"), over the
/// real subd: a real full file system (a small tmpfs, mounted here as root), and write, sync and truncate errors
/// injected into the daemon's system calls on its log (Tests/StateFaults, preloaded). In every case the values
/// answered `+OK` are exactly the values in the log, in order and with consecutive revisions; no value answered
/// `-ERR` is there; and what subscribers were sent and what `GET` answers agree with the log.
final class StateSavingFailureTests: IntegrationTestCase {
    private var cleanups: [() -> Void] = []

    override func tearDown() {
        super.tearDown()
        for cleanup in cleanups.reversed() { cleanup() }
        cleanups = []
    }

    /// A fresh directory under /tmp, removed at teardown.
    private func temporaryDirectory(_ label: String) throws -> URL {
        let directory = URL(fileURLWithPath: "/tmp")
            .appendingPathComponent("subd-\(label)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        cleanups.append { try? FileManager.default.removeItem(at: directory) }
        return directory
    }

    private func config(_ stateDirectory: URL, fsync: String = "turn") -> DaemonConfig {
        DaemonConfig(numbers: ["PLAIN"], extraLines: ["state_dir: \"\(stateDirectory.path)\"", "fsync: \(fsync)"])
    }

    /// A subd whose system calls on its log fail when a file in `faults` says so (Tests/StateFaults/StateFaults.c).
    private func startWithFaults(_ stateDirectory: URL, _ faults: URL, fsync: String = "turn") throws -> Daemon {
        let library = try PreloadLibrary.stateFaults.get()
        return try Daemon(
            config: config(stateDirectory, fsync: fsync),
            environment: ["LD_PRELOAD": library.path, "SUBD_STATE_FAULTS": faults.path])
    }

    /// Makes the next `call` (`write`, `sync`, `truncate`) on the log fail with EIO, or every one with `always`.
    private func inject(_ call: String, into faults: URL, always: Bool = false) throws {
        try (always ? "always" : "once").write(
            to: faults.appendingPathComponent(call), atomically: true, encoding: .utf8)
    }

    /// A publisher that created the retained number R, a subscriber of R, and a watcher of `$SYS.state.*`.
    private func openClients(_ daemon: Daemon) throws -> (
        publisher: LineClient, subscriber: LineClient, watcher: LineClient
    ) {
        let publisher = try connect(daemon, "publisher")
        let subscriber = try connect(daemon, "subscriber")
        let watcher = try connect(daemon, "watcher")
        XCTAssertEqual(try publisher.command("CREATE R retain"), .ok("created"))
        try subscribe(subscriber, "R")
        try subscribe(watcher, "$SYS.state.*")
        return (publisher, subscriber, watcher)
    }

    /// Publishes `texts` to `number` with one write (the daemon reads them in a few turns, each one commit), padded
    /// to `size` bytes, and returns the replies in order.
    private func pipeline(_ client: LineClient, _ number: String, _ texts: [String], size: Int) throws -> [Reply] {
        var batch: [UInt8] = []
        for text in texts {
            let payload =
                Array(text.utf8) + [UInt8](repeating: UInt8(ascii: "."), count: max(0, size - text.utf8.count))
            batch += Array("PUB \(number) \(payload.count)\n".utf8) + payload + [0x0A]
        }
        try client.send(batch)
        return try texts.map { _ in try client.readReply() }
    }

    /// The values a subscriber was sent before its PING: revision (`rev=`) and payload up to the padding.
    private func received(_ subscriber: LineClient) throws -> [(revision: UInt64, text: String)] {
        try subscriber.pushesBeforePing().compactMap(\.message).map {
            (UInt64($0.attributes["rev"] ?? "") ?? 0, String($0.text.prefix { $0 != "." }))
        }
    }

    /// The `$SYS.state.` events a watcher got before its PING, as their JSON text.
    private func stateEvents(_ watcher: LineClient) throws -> [String] {
        try watcher.pushesBeforePing().compactMap(\.message).map(\.text)
    }

    /// The texts answered `+OK` and those answered `-ERR LIMIT`; fails on any other reply.
    private func sort(
        _ texts: [String], _ replies: [Reply], file: StaticString = #filePath, line: UInt = #line
    ) -> (saved: [String], refused: [String]) {
        var saved: [String] = []
        var refused: [String] = []
        for (text, reply) in zip(texts, replies) {
            switch reply {
            case .status(let status) where status.hasPrefix("OK "): saved.append(text)
            case .error("LIMIT", let message) where message.hasPrefix("the state could not be saved"):
                refused.append(text)
            default: XCTFail("\(text): \(reply)", file: file, line: line)
            }
        }
        return (saved, refused)
    }

    /// The log's values of `number`, payloads cut at the padding.
    private func loggedValues(_ stateDirectory: URL, _ number: String) throws -> [(revision: UInt64, text: String)] {
        try StateLogRecords(path: stateDirectory.appendingPathComponent("subd-state.log").path).values(of: number)
            .map { ($0.revision, String($0.text.prefix { $0 != "." })) }
    }

    /// Asserts that `got` holds the `expected` texts with consecutive revisions from `first` on.
    private func assertSame(
        _ got: [(revision: UInt64, text: String)], _ expected: [String], from first: UInt64 = 1, _ context: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(got.map(\.text), expected, context, file: file, line: line)
        XCTAssertEqual(
            got.map(\.revision), (0..<UInt64(got.count)).map { first + $0 }, "\(context): revisions", file: file,
            line: line)
    }

    // MARK: - A full file system

    func testAFullFileSystemRefusesWhatDoesNotFitAndTheLogSubscribersAndGetAgree() throws {
        guard geteuid() == 0 else {
            throw XCTSkip("mounting a small tmpfs needs root: run make test as root to test a really full file system")
        }
        let mountPoint = try temporaryDirectory("full-disk")
        try ExternalTool.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mountPoint.path])
        cleanups.append { try? ExternalTool.run(["umount", "-l", mountPoint.path]) }
        let stateDirectory = mountPoint.appendingPathComponent("state")
        let daemon = try Daemon(config: config(stateDirectory))
        let (publisher, subscriber, watcher) = try openClients(daemon)

        // Twelve pipelined batches of twenty 2 KB values: the first fit, then a batch does not, and the values of a
        // turn are saved together or not at all.
        var texts: [String] = []
        var replies: [Reply] = []
        for batch in 0..<12 {
            let part = (1...20).map { "value-\(batch * 20 + $0)" }
            texts += part
            replies += try pipeline(publisher, "R", part, size: 2000)
        }
        let (saved, refused) = sort(texts, replies)
        XCTAssertGreaterThanOrEqual(saved.count, 100, "256 KiB hold about 125 values of 2 KB")
        XCTAssertGreaterThan(refused.count, 0, "480 KB do not fit in 256 KiB")
        XCTAssertTrue(
            replies.contains { "\($0)".contains("No space left on device") }, "the reason: \(replies.last!)")
        assertSame(try received(subscriber), saved, "the subscriber was sent exactly the saved values")
        XCTAssertEqual(try publisher.command("GET R"), .ok("\(saved.count)"))
        XCTAssertEqual(try publisher.nextMessage().text.prefix { $0 != "." }, Substring(saved.last!))
        let failed = try stateEvents(watcher)
        // One event when saving starts failing, not one per failure (more only if a smaller turn fitted in between).
        XCTAssertLessThan(failed.count, refused.count, "\(failed)")
        XCTAssertTrue(failed.first?.contains(#""event":"state.failed""#) == true, "\(failed)")
        XCTAssertTrue(failed.first?.contains(#""stopped":false"#) == true, "\(failed)")
        XCTAssertEqual(try publisher.command("SEND PLAIN plain numbers go on"), .ok("0"))

        // Room again: the next value is saved, with the revision after the last saved one.
        try ExternalTool.run(["mount", "-o", "remount,size=1m", mountPoint.path])
        XCTAssertEqual(try publisher.command("SEND R after"), .ok("1"))
        assertSame(try received(subscriber), ["after"], from: UInt64(saved.count + 1), "the value after")
        let recovered = try stateEvents(watcher)
        XCTAssertTrue(recovered.first?.contains(#""event":"state.recovered""#) == true, "\(recovered)")

        _ = daemon.stop(signal: SIGKILL)
        assertSame(try loggedValues(stateDirectory, "R"), saved + ["after"], "the log")
        let restarted = try Daemon(config: config(stateDirectory))
        let reader = try connect(restarted, "after the restart")
        XCTAssertEqual(try reader.command("GET R"), .ok("\(saved.count + 1)"))
        XCTAssertEqual(try reader.nextMessage().text, "after")
        XCTAssertEqual(restarted.stop(), 0)
    }

    // MARK: - Errors injected into the log's system calls

    func testAWriteErrorRefusesTheValueAndTheNextWriteThatWorksGoesOnFromTheLastSavedRevision() throws {
        for fsync in ["turn", "everysec"] {
            let stateDirectory = try temporaryDirectory("write-error")
            let faults = try temporaryDirectory("faults")
            let daemon = try startWithFaults(stateDirectory, faults, fsync: fsync)
            let publisher = try connect(daemon, "publisher")
            let subscriber = try connect(daemon, "subscriber")
            XCTAssertEqual(try publisher.command("CREATE R retain"), .ok("created"))
            try subscribe(subscriber, "R")
            XCTAssertEqual(try publisher.command("SEND R first"), .ok("1"))

            try inject("write", into: faults, always: true)
            let refused = try publisher.command("SEND R refused")
            assertError(refused, "LIMIT", "fsync \(fsync): a value whose write failed")
            XCTAssertTrue("\(refused)".hasSuffix("Input/output error; nothing was changed"), "\(refused)")
            assertError(try publisher.command("CREATE NEW"), "LIMIT", "fsync \(fsync): a CREATE whose write failed")
            XCTAssertEqual(try publisher.command("GET R"), .ok("1"), "fsync \(fsync): GET has what the disk has")
            XCTAssertEqual(try publisher.nextMessage().text, "first")
            XCTAssertEqual(try publisher.command("SEND PLAIN plain numbers go on"), .ok("0"))
            XCTAssertEqual(try stats(publisher)["state_failures"], "2")

            try FileManager.default.removeItem(at: faults.appendingPathComponent("write"))
            XCTAssertEqual(try publisher.command("SEND R second"), .ok("1"), "fsync \(fsync): written again")
            XCTAssertEqual(try publisher.command("CREATE NEW"), .ok("created"))
            assertSame(try received(subscriber), ["first", "second"], "fsync \(fsync): the subscriber")
            _ = daemon.stop(signal: SIGKILL)
            assertSame(try loggedValues(stateDirectory, "R"), ["first", "second"], "fsync \(fsync): the log")
        }
    }

    func testASyncErrorRefusesTheTurnsValuesCutsThemOffTheLogAndStopsSavingUntilARestart() throws {
        let stateDirectory = try temporaryDirectory("sync-error")
        let faults = try temporaryDirectory("faults")
        let daemon = try startWithFaults(stateDirectory, faults)
        let (publisher, subscriber, watcher) = try openClients(daemon)
        XCTAssertEqual(try publisher.command("SEND R first"), .ok("1"))

        try inject("sync", into: faults)  // once: the cut's own sync works
        let texts = (2...6).map { "value-\($0)" }
        let replies = try pipeline(publisher, "R", texts, size: 100)
        XCTAssertEqual(sort(texts, replies).refused, texts, "\(replies)")
        XCTAssertTrue("\(replies[0])".contains("fdatasync"), "\(replies[0])")
        assertError(try publisher.command("SEND R later"), "LIMIT", "after a failed sync")
        XCTAssertTrue("\(try publisher.command("CREATE NEW"))".contains("refused until a restart"))
        XCTAssertEqual(try publisher.command("SEND PLAIN plain numbers go on"), .ok("0"))
        XCTAssertEqual(try publisher.command("GET R"), .ok("1"))
        XCTAssertEqual(try publisher.nextMessage().text, "first")
        assertSame(try received(subscriber), ["first"], "the subscriber")
        let events = try stateEvents(watcher)
        XCTAssertEqual(events.count, 1, "\(events)")
        XCTAssertTrue(events.first?.contains(#""stopped":true"#) == true, "\(events)")
        assertOutput(daemon.child.stderr, contains: "saving stopped")

        _ = daemon.stop(signal: SIGKILL)
        assertSame(try loggedValues(stateDirectory, "R"), ["first"], "the refused values were cut off the log")
        let restarted = try Daemon(config: config(stateDirectory))
        let client = try connect(restarted, "after the restart")
        XCTAssertEqual(try client.command("SEND R again"), .ok("0"), "a restart saves again")
        XCTAssertEqual(try client.command("GET R"), .ok("2"))
        XCTAssertEqual(restarted.stop(), 0)
    }

    func testWhenTheFailedSyncCannotBeUndoneThePublisherGetsNoAnswerOnlyTheClose() throws {
        let stateDirectory = try temporaryDirectory("uncertain")
        let faults = try temporaryDirectory("faults")
        let daemon = try startWithFaults(stateDirectory, faults)
        let publisher = try connect(daemon, "publisher")
        let other = try connect(daemon, "other client")
        XCTAssertEqual(try publisher.command("CREATE R retain"), .ok("created"))
        XCTAssertEqual(try publisher.command("SEND R first"), .ok("0"))
        try inject("sync", into: faults)
        try inject("truncate", into: faults)
        try publisher.send("PING\nSEND R unknown\nPING\n")
        XCTAssertEqual(try publisher.readReply(), .status("PONG"), "the replies before the value still go out")
        try publisher.expectClosed()
        XCTAssertEqual(try other.command("GET R"), .ok("1"), "the value was not made current")
        XCTAssertEqual(try other.nextMessage().text, "first")
        publisher.close()
        try eventually("the close counted as closed_unsaved") { try stats(other)["closed_unsaved"] == "1" }
        _ = daemon.stop(signal: SIGKILL)
    }

    // MARK: - Order

    func testASessionsCommandsBehindItsStagedValuesWaitForThemAndKeepTheirOrder() throws {
        let stateDirectory = try temporaryDirectory("order")
        let daemon = try Daemon(config: config(stateDirectory))
        let publisher = try connect(daemon, "publisher")
        let everything = try connect(daemon, "subscriber to >")
        XCTAssertEqual(try publisher.command("CREATE R retain"), .ok("created"))
        try subscribe(everything, ">")
        try publisher.send("SEND R a\nSEND PLAIN b\nGET R\nBOGUS\nSEND R c\nSEND R d\nPING\n")
        XCTAssertEqual(try publisher.readReply(), .ok("1"))
        XCTAssertEqual(try publisher.readReply(), .ok("1"))
        XCTAssertEqual(try publisher.readReply(), .ok("1"), "GET sees the value published before it")
        XCTAssertEqual(try publisher.nextMessage().text, "a")
        assertError(try publisher.readReply(), "UNKNOWN", "a malformed line between values")
        XCTAssertEqual(try publisher.readReply(), .ok("1"))
        XCTAssertEqual(try publisher.readReply(), .ok("1"))
        XCTAssertEqual(try publisher.readReply(), .status("PONG"))
        let got = try everything.pushesBeforePing().compactMap(\.message).map { "\($0.number) \($0.text)" }
        XCTAssertEqual(got, ["R a", "PLAIN b", "R c", "R d"], "the publisher's order")
        XCTAssertEqual(daemon.stop(), 0)
    }

    func testAValueWhosePublisherLeftAtOnceIsStillSavedAndPublished() throws {
        let stateDirectory = try temporaryDirectory("gone")
        let daemon = try Daemon(config: config(stateDirectory))
        let reader = try connect(daemon, "reader")
        XCTAssertEqual(try reader.command("CREATE R retain"), .ok("created"))
        try subscribe(reader, "R")
        for round in 1...20 {
            // The value and the end of the connection arrive together (a close, or a reset on odd rounds): the session
            // is closing, or closed, before its value is saved.
            let publisher = try LineClient.connect(port: daemon.port, label: "publisher \(round)")
            try publisher.send("SEND R value-\(round)\n")
            if round % 2 == 0 { publisher.close() } else { publisher.reset() }
            XCTAssertEqual(try reader.nextMessage().text, "value-\(round)", "round \(round): delivered")
        }
        XCTAssertEqual(try reader.command("GET R"), .ok("20"), "current")
        XCTAssertEqual(try reader.nextMessage().text, "value-20")
        _ = daemon.stop(signal: SIGKILL)
        XCTAssertEqual(try loggedValues(stateDirectory, "R").count, 20, "and saved")
    }
}
