import Foundation
import Glibc
import XCTest

/// `state_dir` over the real subd: the created numbers (with their kind) and every retained number's value and
/// revision survive a restart and a `kill -9`; a corrupt log stops the start with one line naming the file and the
/// offset; a write torn at the end is cut off.
final class StateTests: IntegrationTestCase {
    private var stateDirectories: [URL] = []

    override func tearDown() {
        super.tearDown()
        for directory in stateDirectories { try? FileManager.default.removeItem(at: directory) }
    }

    /// A fresh state directory path (not created: subd makes it).
    private func makeStateDirectory() -> URL {
        let directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("subd-state-\(UUID().uuidString.prefix(8))")
        stateDirectories.append(directory)
        return directory
    }

    private func config(_ directory: URL, numbers: [String] = []) -> DaemonConfig {
        DaemonConfig(numbers: numbers, extraLines: ["state_dir: \"\(directory.path)\""])
    }

    /// A subd that this test kills itself (not checked for exit status 0 at teardown).
    private func startKillable(_ directory: URL) throws -> Daemon {
        try Daemon(config: config(directory))
    }

    private func kill9(_ daemon: Daemon) {
        _ = daemon.stop(signal: SIGKILL)
    }

    func testNumbersAndRetainedValuesSurviveKillNineAndRestart() throws {
        let directory = makeStateDirectory()
        let first = try startKillable(directory)
        let client = try connect(first, "before the kill")
        XCTAssertNil(try client.command("HELLO name=lab").errorCode)
        XCTAssertEqual(try client.command("CREATE PLAIN"), .ok("created"))
        XCTAssertEqual(try client.command("CREATE PRICE retain"), .ok("created"))
        XCTAssertEqual(try client.command("CREATE EMPTY retain"), .ok("created"))
        XCTAssertEqual(try client.command("CREATE SHORTLIVED"), .ok("created"))
        XCTAssertEqual(try client.command("REMOVE SHORTLIVED"), .ok("removed 0"))
        XCTAssertEqual(try client.command("SEND PRICE 10"), .ok("0"))
        try client.send("PUB PRICE 2 unit=EUR note=a%20b\n11\n")
        XCTAssertEqual(try client.readReply(), .ok("0"))
        // Killed right after the +OK of a retained value, with no other change after it to carry it to the log.
        kill9(first)

        let second = try startDaemon(config(directory))
        assertOutput(second.child.stderr, contains: "3 numbers")
        let reader = try connect(second, "after the restart")
        XCTAssertEqual(
            try reader.command("LIST > kind"),
            .list(["EMPTY 0 retained 0", "PLAIN 0 plain", "PRICE 0 retained 2"]))
        XCTAssertEqual(try reader.command("GET PRICE"), .ok("2"))
        let value = try reader.nextMessage()
        XCTAssertEqual(value.text, "11")
        XCTAssertEqual(value.attributes["rev"], "2")
        XCTAssertEqual(value.attributes["from"], "lab")
        XCTAssertEqual(value.attributes["unit"], "EUR")
        XCTAssertEqual(value.attributes["note"], "a%20b", "info pairs as they were sent")
        XCTAssertEqual(try reader.command("GET EMPTY"), .ok("0"))
        XCTAssertEqual(try reader.command("SUB PRICE"), .ok())
        XCTAssertEqual(try reader.nextMessage().attributes["rev"], "2", "the value pushed on SUB")
        XCTAssertEqual(try reader.command("SEND PRICE 12"), .ok("1"))
        XCTAssertEqual(try reader.nextMessage().attributes["rev"], "3", "revisions go on from the restored one")
        XCTAssertEqual(try reader.command("CREATE SHORTLIVED"), .ok("created"), "the removal was kept too")
    }

    func testACleanStopAndAReloadKeepTheStateAndConfiguredNumbersAreSaved() throws {
        let directory = makeStateDirectory()
        let first = try startDaemon(config(directory, numbers: ["FROMCONFIG"]))
        let client = try connect(first)
        XCTAssertEqual(try client.command("CREATE R retain"), .ok("created"))
        for index in 1...50 { XCTAssertEqual(try client.command("SEND R v\(index)"), .ok("0")) }
        XCTAssertEqual(first.stop(), 0)

        let second = try startDaemon(config(directory))
        let reader = try connect(second)
        XCTAssertEqual(
            try reader.command("LIST > kind"), .list(["FROMCONFIG 0 plain", "R 0 retained 50"]),
            "a number the config no longer lists stays, as it does on a reload")
        XCTAssertEqual(try reader.command("GET R"), .ok("50"))
        XCTAssertEqual(try reader.nextMessage().text, "v50")
    }

    func testACorruptLogStopsTheStartWithOneLineNamingTheFileAndTheOffsetAndIsLeftAsItIs() throws {
        let directory = makeStateDirectory()
        let first = try startDaemon(config(directory))
        let client = try connect(first)
        for name in ["A", "B", "C"] { XCTAssertEqual(try client.command("CREATE \(name)"), .ok("created")) }
        XCTAssertEqual(first.stop(), 0)

        let log = directory.appendingPathComponent("subd-state.log")
        var bytes = try [UInt8](Data(contentsOf: log))
        // A byte inside the body of the first record (the header is followed by three "created" records): damage
        // with whole records after it, which no crash makes.
        let target = bytes.count - 3 * (bytes.count / 4)
        bytes[target] ^= 0xFF
        try Data(bytes).write(to: log)

        XCTAssertThrowsError(try Daemon(config: config(directory))) { error in
            let text = "\(error)"
            let critical = text.split(separator: "\n").filter { $0.contains("critical") }
            XCTAssertEqual(critical.count, 1, text)
            XCTAssertTrue(critical.first?.contains(log.path) == true, text)
            XCTAssertTrue(critical.first?.contains("offset") == true, text)
        }
        XCTAssertEqual(try [UInt8](Data(contentsOf: log)), bytes, "the file is never emptied or rewritten")
    }

    func testAWriteTornAtTheEndIsCutOffAndTheStateBeforeItIsKept() throws {
        let directory = makeStateDirectory()
        let first = try startDaemon(config(directory))
        let client = try connect(first)
        XCTAssertEqual(try client.command("CREATE KEPT"), .ok("created"))
        XCTAssertEqual(try client.command("CREATE TORN"), .ok("created"))
        XCTAssertEqual(first.stop(), 0)

        let log = directory.appendingPathComponent("subd-state.log")
        let bytes = try [UInt8](Data(contentsOf: log))
        try Data(bytes.dropLast(3)).write(to: log)

        let second = try startDaemon(config(directory))
        assertOutput(second.child.stderr, contains: "torn")
        let reader = try connect(second)
        XCTAssertEqual(try reader.command("LIST"), .list(["KEPT 0"]))
        XCTAssertEqual(try reader.command("CREATE AFTER"), .ok("created"), "the log goes on after the cut")
    }

    func testTheLogIsCompactedOnceItOutgrowsWhatItHoldsAndStillRestoresTheLatestValue() throws {
        let directory = makeStateDirectory()
        let first = try startDaemon(config(directory))
        let client = try connect(first)
        XCTAssertEqual(try client.command("CREATE BIG retain"), .ok("created"))
        let filler = String(repeating: "x", count: 4000)
        for index in 1...400 {
            try client.send("SEND BIG \(index) \(filler)\n")
            if index % 50 == 0 { for _ in 0..<50 { XCTAssertEqual(try client.readReply(), .ok("0")) } }
        }
        let log = directory.appendingPathComponent("subd-state.log").path
        let deadline = Date().addingTimeInterval(5)
        var size = Int.max
        while Date() < deadline {
            size = (try FileManager.default.attributesOfItem(atPath: log)[.size] as? Int) ?? Int.max
            if size < 100_000 { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        XCTAssertLessThan(size, 100_000, "400 values of 4 KB (1.6 MB) compacted to the one that counts")
        assertOutput(first.child.stderr, contains: "log compacted")
        XCTAssertEqual(first.stop(), 0)

        let second = try startDaemon(config(directory))
        let reader = try connect(second)
        XCTAssertEqual(try reader.command("GET BIG"), .ok("400"))
        XCTAssertEqual(try reader.nextMessage().text, "400 " + filler)
    }

    /// Seen from outside with strace: with `fsync: turn`, no reply leaves while a log write is not yet synced
    /// (CREATE, REMOVE, and pipelined retained SENDs, whose values share one sync per turn); with `everysec` the
    /// replies do not wait for a sync.
    func testRepliesLeaveOnlyAfterTheSyncOfWhatTheyAcknowledge() throws {
        for policy in ["turn", "everysec"] {
            let directory = makeStateDirectory()
            let trace = directory.path + ".trace"
            defer { try? FileManager.default.removeItem(atPath: trace) }
            var settings = config(directory)
            settings.extraLines.append("fsync: \(policy)")
            let daemon = try Daemon(
                config: settings,
                shellPrefix: "exec strace -f -qq -s 24 -e trace=fdatasync,write,writev -o '\(trace)' \"$0\" \"$@\"")
            let client = try connect(daemon, "client, fsync \(policy)")
            XCTAssertEqual(try client.command("CREATE R retain"), .ok("created"))
            try client.send(String(repeating: "SEND R value\n", count: 300))
            for _ in 0..<300 { XCTAssertEqual(try client.readReply(), .ok("0")) }
            XCTAssertEqual(try client.command("CREATE GONE"), .ok("created"))
            XCTAssertEqual(try client.command("REMOVE GONE"), .ok("removed 0"))
            let text = try String(contentsOfFile: trace, encoding: .utf8)
            let subd = try XCTUnwrap(text.split(separator: " ").first.flatMap { Int32($0) }, "the traced pid")
            kill(subd, SIGTERM)
            XCTAssertEqual(daemon.stop(signal: nil), 0, "strace exits with subd's status")

            let calls = try String(contentsOfFile: trace, encoding: .utf8).split(separator: "\n")
            let logFD = try XCTUnwrap(calls.lazy.compactMap { $0.firstMatch(of: /fdatasync\((\d+)\)/)?.output.1 }.first)
            var unsynced = false
            var writtenSinceReply = false
            var syncs = 0
            var valueReplies = 0
            var repliesWithoutTheirValues = 0
            var repliesWhileUnsynced = 0
            for call in calls {
                if call.contains("fdatasync(\(logFD))") {
                    unsynced = false
                    syncs += 1
                } else if call.contains(" write(\(logFD), ") {
                    unsynced = true
                    writtenSinceReply = true
                } else if call.contains("writev(") && call.contains("+OK") {
                    if call.contains("+OK 0") {
                        // The replies of a turn that ran SENDs to R: their values were written since the last reply.
                        valueReplies += 1
                        if !writtenSinceReply { repliesWithoutTheirValues += 1 }
                        if unsynced { repliesWhileUnsynced += 1 }
                    }
                    writtenSinceReply = false
                }
            }
            XCTAssertGreaterThan(valueReplies, 0, "fsync \(policy): the trace shows the replies\n\(calls.suffix(20))")
            XCTAssertEqual(repliesWithoutTheirValues, 0, "fsync \(policy): a reply left before its values were written")
            if policy == "turn" {
                XCTAssertEqual(repliesWhileUnsynced, 0, "a reply left before the sync of what it acknowledges")
                XCTAssertLessThan(syncs, 100, "300 pipelined values take a few group commits, not 300 syncs")
            } else {
                XCTAssertGreaterThan(repliesWhileUnsynced, 0, "everysec replies without waiting for a sync")
            }
        }
    }

    func testAWriteOverTheFileSizeLimitIsRefusedAndWhatStillFitsIsSaved() throws {
        let directory = makeStateDirectory()
        // A real write error from the kernel (EFBIG past `ulimit -f`, 8 KiB): subd ignores SIGXFSZ itself.
        let daemon = try startDaemon(config(directory, numbers: ["PLAIN"]), shellPrefix: "ulimit -f 8")
        let client = try connect(daemon)
        XCTAssertEqual(try client.command("CREATE R retain"), .ok("created"))
        XCTAssertEqual(try client.command("SUB PLAIN"), .ok())
        let value = String(repeating: "v", count: 1000)
        var saved = 0
        while saved < 20, case .status = try client.command("SEND R \(value)") { saved += 1 }
        XCTAssertEqual(try stats(client)["state_failures"], "1", "8 KiB of log took \(saved) values")
        XCTAssertEqual(try client.command("GET R"), .ok("\(saved)"), "the refused value is not current")
        XCTAssertEqual(try client.nextMessage().text, value)
        XCTAssertEqual(try client.command("SEND R small"), .ok("0"), "a value that still fits is saved")
        XCTAssertEqual(try client.command("GET R"), .ok("\(saved + 1)"), "with the revision after the last saved")
        XCTAssertEqual(try client.nextMessage().text, "small")
        XCTAssertEqual(try client.command("SEND PLAIN still"), .ok("1"), "plain numbers go on")
        XCTAssertEqual(try client.nextMessage().text, "still")
        assertOutput(daemon.child.stderr, contains: "critical")
        XCTAssertEqual(daemon.stop(), 0)
    }

    func testEverySavedNumberComesBackEvenOverALoweredMaxNumbers() throws {
        let directory = makeStateDirectory()
        let first = try startDaemon(config(directory))
        let client = try connect(first)
        for name in ["A", "B", "C"] { XCTAssertEqual(try client.command("CREATE \(name)"), .ok("created")) }
        XCTAssertEqual(first.stop(), 0)

        var lowered = config(directory)
        lowered.maxNumbers = 2
        let second = try startDaemon(lowered)
        assertOutput(second.child.stderr, contains: "more numbers were restored than max_numbers allows")
        let reader = try connect(second)
        XCTAssertEqual(try reader.command("LIST"), .list(["A 0", "B 0", "C 0"]))
        assertError(try reader.command("CREATE D"), "LIMIT", "over max_numbers")
        XCTAssertEqual(try reader.command("REMOVE A"), .ok("removed 0"))
        XCTAssertEqual(try reader.command("REMOVE B"), .ok("removed 0"))
        XCTAssertEqual(try reader.command("CREATE D"), .ok("created"), "room again")
    }

    func testStateDirectoryIsLockedAgainstASecondDaemon() throws {
        let directory = makeStateDirectory()
        _ = try startDaemon(config(directory))
        XCTAssertThrowsError(try Daemon(config: config(directory))) { error in
            XCTAssertTrue("\(error)".contains(directory.path), "\(error)")
        }
    }

    /// `kill -9` at random moments while one client pipelines `CREATE`s and `SEND`s to retained numbers: after each
    /// restart every number whose `CREATE` got `+OK` exists, every value whose `SEND` got `+OK` is there with its
    /// revision, and the hot number's value is one that was sent, at a revision no lower than the acknowledged ones.
    func testKillNineAtRandomMomentsUnderLoadLosesNothingAcknowledged() throws {
        let directory = makeStateDirectory()
        var generator = SystemRandomNumberGenerator()
        var acknowledgedNumbers: [String] = []
        var acknowledgedValues: [String: String] = [:]
        var hotSent: Set<String> = []
        var hotAcknowledged = 0
        var next = 0
        for round in 0..<5 {
            let daemon = try startKillable(directory)
            let client = try connect(daemon, "load, round \(round)", timeout: 10)
            if round == 0 { XCTAssertEqual(try client.command("CREATE HOT retain"), .ok("created")) }
            // The kill comes at a random moment after the round's first batch was acknowledged, so every round
            // kills a daemon under load however slowly a busy machine starts it.
            let delay = Double.random(in: 0.05...0.4, using: &generator)
            var killScheduled = false
            do {
                while true {
                    var batch = ""
                    var expected: [(kind: Int, name: String, payload: String)] = []
                    for _ in 0..<20 {
                        next += 1
                        let name = "N\(next)"
                        batch += "CREATE \(name) retain\nSEND \(name) value-\(next)\nSEND HOT hot-\(next)\n"
                        expected += [(0, name, ""), (1, name, "value-\(next)"), (2, "HOT", "hot-\(next)")]
                        hotSent.insert("hot-\(next)")
                    }
                    try client.send(batch)
                    for item in expected {
                        let reply = try client.readReply()
                        switch item.kind {
                        case 0:
                            XCTAssertEqual(reply, .ok("created"))
                            acknowledgedNumbers.append(item.name)
                        case 1:
                            XCTAssertEqual(reply, .ok("0"))
                            acknowledgedValues[item.name] = item.payload
                        default:
                            XCTAssertEqual(reply, .ok("0"))
                            hotAcknowledged += 1
                        }
                    }
                    if !killScheduled {
                        killScheduled = true
                        DispatchQueue.global().asyncAfter(deadline: .now() + delay) {
                            daemon.child.send(signal: SIGKILL)
                        }
                    }
                }
            } catch {
                // The kill: the connection ended mid-stream.
            }
            XCTAssertTrue(killScheduled, "round \(round): the connection ended before the first batch was acknowledged")
            _ = daemon.stop(signal: nil)

            let check = try startKillable(directory)
            let reader = try connect(check, "check after round \(round)", timeout: 10)
            guard case .list(let lines) = try reader.command("LIST") else { return XCTFail("LIST") }
            let existing = Set(lines.map { String($0.split(separator: " ")[0]) })
            let missing = acknowledgedNumbers.filter { !existing.contains($0) }
            XCTAssertEqual(missing, [], "round \(round): acknowledged CREATEs lost after \(delay) s")
            for (name, payload) in acknowledgedValues.sorted(by: { $0.key < $1.key }).suffix(50) {
                XCTAssertEqual(try reader.command("GET \(name)"), .ok("1"), "round \(round): \(name)")
                XCTAssertEqual(try reader.nextMessage().text, payload, "round \(round): \(name)")
            }
            guard case .status(let status) = try reader.command("GET HOT") else { return XCTFail("GET HOT") }
            let revision = Int(status.dropFirst(3)) ?? -1
            XCTAssertGreaterThanOrEqual(revision, hotAcknowledged, "round \(round): HOT went back in revisions")
            if revision > 0 {
                let hot = try reader.nextMessage()
                XCTAssertTrue(hotSent.contains(hot.text), "round \(round): HOT holds \(hot.text), never sent")
                XCTAssertEqual(hot.attributes["rev"], "\(revision)")
            }
            hotAcknowledged = revision
            kill9(check)
        }
    }
}
