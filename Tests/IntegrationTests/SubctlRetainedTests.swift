import Foundation
import XCTest

/// `subctl create --retain`, `get`, `watch` and `list` with kinds (protocol 1.1, "Retained numbers"), with the real
/// subd in between. They need the server side of retained numbers (issue 9, part 1).
final class SubctlRetainedTests: IntegrationTestCase {
    /// The README walk-through: a retained number keeps its value; `watch` prints the value it has, then each change
    /// as old -> new.
    func testReadmeWalkthroughCreateRetainPublishWatch() throws {
        let daemon = try startDaemon()
        let created = try subctl(daemon, "create", ["PRICE", "--retain"])
        XCTAssertEqual(created.lines, ["created PRICE"], "\(created)")
        XCTAssertEqual(try subctl(daemon, "publish", ["PRICE", "11"]).lines, ["published to 0 receivers"])
        let got = try subctl(daemon, "get", ["PRICE"])
        XCTAssertEqual(got.output, "11\n", "\(got)")
        XCTAssertEqual(got.status, 0)

        let watcher = try watch(daemon, ["PRICE"])
        XCTAssertEqual(try watcher.readTextLine(), "(none) -> 11", "the value it has when the watch starts")
        XCTAssertEqual(try subctl(daemon, "publish", ["PRICE", "12"]).lines, ["published to 1 receiver"])
        XCTAssertEqual(try watcher.readTextLine(), "11 -> 12")
        XCTAssertEqual(try subctl(daemon, "publish", ["PRICE", "12.5"]).status, 0)
        XCTAssertEqual(try watcher.readTextLine(), "12 -> 12.5")
        XCTAssertEqual(watcher.stop(), 0, "watch exits 0 on SIGTERM; stderr: \(watcher.stderr)")
        XCTAssertEqual(watcher.stderr, "subctl: watching PRICE\n", "no gap, nothing else")
    }

    func testCreateRetainKeepsTheKindOfAnExistingNumber() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["PLAIN"]))
        let first = try subctl(daemon, "create", ["R", "PLAIN", "--retain"])
        XCTAssertEqual(first.lines, ["created R", "exists PLAIN"], "\(first)")
        let again = try subctl(daemon, "create", ["R"])
        XCTAssertEqual(again.lines, ["exists R"], "\(again)")
        let raw = try connect(daemon)
        XCTAssertEqual(try raw.command("GET R"), .ok("0"), "R is retained, nothing published")
        assertError(try raw.command("GET PLAIN"), "PROTO", "PLAIN stays plain")
    }

    func testGetPrintsTheLatestValueAndJsonHasItsRevision() throws {
        let daemon = try startDaemon()
        XCTAssertEqual(try subctl(daemon, "create", ["PRICE", "--retain"]).status, 0)
        let empty = try subctl(daemon, "get", ["PRICE"])
        XCTAssertEqual(empty.status, 1, "\(empty)")
        XCTAssertEqual(empty.output, "")
        XCTAssertEqual(empty.errorLines, ["subctl: 'PRICE' has no value yet (revision 0: nothing was published to it)"])

        XCTAssertEqual(try subctl(daemon, "publish", ["PRICE", "11"]).status, 0)
        let published = try subctl(
            daemon, "publish", ["--name", "lab", "PRICE", "12 EUR", "--info", "unit=EUR", "--info", "note=a b"])
        XCTAssertEqual(published.status, 0, "\(published)")
        let plain = try subctl(daemon, "get", ["PRICE"])
        XCTAssertEqual(plain.output, "12 EUR\n", "\(plain)")
        let json = try subctl(daemon, "get", ["PRICE", "--json"])
        XCTAssertEqual(json.status, 0, "\(json)")
        XCTAssertEqual(json.lines.count, 1, "\(json)")
        let object = try jsonObject(json.stdout)
        XCTAssertEqual(object["number"] as? String, "PRICE")
        XCTAssertEqual(object["payload"] as? String, "12 EUR")
        XCTAssertEqual(object["revision"] as? Int, 2)
        XCTAssertEqual(object["from"] as? String, "lab")
        XCTAssertEqual(object["info"] as? [String: String], ["unit": "EUR", "note": "a b"])
    }

    func testGetOfAPlainOrMissingNumberExitsOneSayingWhy() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["PLAIN"]))
        let plain = try subctl(daemon, "get", ["PLAIN"])
        XCTAssertEqual(plain.status, 1, "\(plain)")
        XCTAssertTrue(plain.stderr.hasPrefix("subctl: 'PLAIN' is not a retained number"), "\(plain)")
        XCTAssertTrue(plain.stderr.contains("subctl create PLAIN --retain"), "\(plain)")
        let missing = try subctl(daemon, "get", ["NOPE"])
        XCTAssertEqual(missing.status, 1, "\(missing)")
        XCTAssertEqual(
            missing.errorLines, ["subctl: no subscription number 'NOPE' (create it with: subctl create NOPE --retain)"])
    }

    /// A number with nothing published: the watch prints nothing until the first publication.
    func testWatchOfANumberWithNoValueStartsAtTheFirstPublication() throws {
        let daemon = try startDaemon()
        XCTAssertEqual(try subctl(daemon, "create", ["EMPTY", "--retain"]).status, 0)
        let watcher = try watch(daemon, ["EMPTY", "--count", "2"])
        let publisher = try connect(daemon, "publisher")
        XCTAssertEqual(try publisher.command("SEND EMPTY first"), .ok("1"))
        XCTAssertEqual(try publisher.command("SEND EMPTY second"), .ok("1"))
        XCTAssertEqual(watcher.waitForExit(), 0, "--count 2; stderr: \(watcher.stderr)")
        watcher.child.stdout.waitForEnd(timeout: 5)
        XCTAssertEqual(watcher.child.stdout.text, "(none) -> first\nfirst -> second\n")
    }

    func testWatchJsonGivesOldNewRevisionFromInfoAndMissed() throws {
        let daemon = try startDaemon()
        XCTAssertEqual(try subctl(daemon, "create", ["J", "--retain"]).status, 0)
        XCTAssertEqual(try subctl(daemon, "publish", ["J", "V1.0"]).status, 0)
        let watcher = try watch(daemon, ["J", "--json"])
        let publisher = try connect(daemon, "publisher")
        _ = try publisher.command("HELLO name=lab")
        try publisher.send(Array("PUB J 4 unit=EUR note=a%20b\nV2.0\n".utf8))
        XCTAssertEqual(try publisher.readReply(), .ok("1"))
        try publisher.send([0x50, 0x55, 0x42, 0x20, 0x4A, 0x20, 0x32, 0x0A, 0xFF, 0xFE, 0x0A])  // PUB J 2, not UTF-8
        XCTAssertEqual(try publisher.readReply(), .ok("1"))

        let first = try jsonObject(try watcher.readLine())
        XCTAssertEqual(first["number"] as? String, "J")
        XCTAssertTrue(first["old"] is NSNull, "old is null for the first change: \(first)")
        XCTAssertEqual(first["new"] as? String, "V1.0")
        XCTAssertEqual(first["revision"] as? Int, 1)
        XCTAssertTrue(first["from"] is NSNull, "\(first)")
        XCTAssertEqual(first["info"] as? [String: String], [:])
        XCTAssertEqual(first["missed"] as? Int, 0)

        let second = try jsonObject(try watcher.readLine())
        XCTAssertEqual(second["old"] as? String, "V1.0")
        XCTAssertEqual(second["new"] as? String, "V2.0")
        XCTAssertEqual(second["revision"] as? Int, 2)
        XCTAssertEqual(second["from"] as? String, "lab")
        XCTAssertEqual(second["info"] as? [String: String], ["unit": "EUR", "note": "a b"])
        XCTAssertEqual(second["missed"] as? Int, 0)

        let third = try jsonObject(try watcher.readLine())
        XCTAssertEqual(third["old"] as? String, "V2.0")
        XCTAssertNil(third["new"], "a payload that is not UTF-8 has no 'new'")
        XCTAssertEqual(third["new_base64"] as? String, Data([0xFF, 0xFE]).base64EncodedString())
        XCTAssertEqual(watcher.stop(), 0)
    }

    /// The client was cut off and came back: `watch --after REV` resumes after the last revision it saw, and the
    /// revisions published in between are reported as missed (stderr, and `missed` with --json), not hidden.
    func testWatchAfterARevisionReportsTheRevisionsMissed() throws {
        let daemon = try startDaemon()
        XCTAssertEqual(try subctl(daemon, "create", ["N", "--retain"]).status, 0)
        let publisher = try connect(daemon, "publisher")
        for value in ["v1", "v2", "v3", "v4"] { XCTAssertEqual(try publisher.command("SEND N \(value)"), .ok("0")) }

        let resumed = try subctl(daemon, "watch", ["N", "--after", "1", "--count", "1"])
        XCTAssertEqual(resumed.status, 0, "\(resumed)")
        XCTAssertEqual(resumed.output, "(none) -> v4\n", "\(resumed)")
        XCTAssertTrue(
            resumed.stderr.contains("subctl: missed revisions 2 to 3 of 'N' (2 changes not seen)\n"), "\(resumed)")

        let json = try subctl(daemon, "watch", ["N", "--after", "2", "--count", "1", "--json"])
        XCTAssertEqual(json.status, 0, "\(json)")
        let object = try jsonObject(json.stdout)
        XCTAssertEqual(object["missed"] as? Int, 1, "revision 3 was missed: \(json)")
        XCTAssertEqual(object["revision"] as? Int, 4)
        XCTAssertTrue(json.stderr.contains("subctl: missed revision 3 of 'N' (1 change not seen)\n"), "\(json)")

        // Nothing new since the revision seen: the next publication is the first change, with its old value.
        let upToDate = try watch(daemon, ["N", "--after", "4", "--count", "1"])
        XCTAssertEqual(try publisher.command("SEND N v5"), .ok("1"))
        XCTAssertEqual(upToDate.waitForExit(), 0, "stderr: \(upToDate.stderr)")
        upToDate.child.stdout.waitForEnd(timeout: 5)
        XCTAssertEqual(upToDate.child.stdout.text, "v4 -> v5\n")
        XCTAssertFalse(upToDate.stderr.contains("missed"), upToDate.stderr)
    }

    /// The number is removed and created again: its revisions start over, and a watch resumed after the revision seen
    /// before says that the revision went back instead of taking the new revision 1 for a change after it.
    func testWatchResumedAfterTheNumberWasCreatedAgainSaysTheRevisionWentBack() throws {
        let daemon = try startDaemon()
        XCTAssertEqual(try subctl(daemon, "create", ["R", "--retain"]).status, 0)
        for value in ["a", "b", "c"] { XCTAssertEqual(try subctl(daemon, "publish", ["R", value]).status, 0) }
        let before = try subctl(daemon, "watch", ["R", "--count", "1", "--json"])
        XCTAssertEqual(try jsonObject(before.stdout)["revision"] as? Int, 3, "\(before)")
        XCTAssertEqual(try subctl(daemon, "remove", ["R"]).status, 0)
        XCTAssertEqual(try subctl(daemon, "create", ["R", "--retain"]).lines, ["created R"])
        XCTAssertEqual(try subctl(daemon, "publish", ["R", "new"]).status, 0)

        let result = try subctl(daemon, "watch", ["R", "--after", "3", "--count", "1", "--json"])
        XCTAssertEqual(result.status, 0, "\(result)")
        let object = try jsonObject(result.stdout)
        XCTAssertEqual(object["new"] as? String, "new")
        XCTAssertEqual(object["revision"] as? Int, 1)
        XCTAssertTrue(object["missed"] is NSNull, "how much was missed cannot be told: \(result)")
        XCTAssertTrue(result.stderr.contains("subctl: the revision of 'R' went back from 3 to 1"), "\(result)")
    }

    func testWatchExitsOneWhenTheNumberIsRemoved() throws {
        let daemon = try startDaemon()
        XCTAssertEqual(try subctl(daemon, "create", ["DOOMED", "--retain"]).status, 0)
        let watcher = try watch(daemon, ["DOOMED"])
        XCTAssertEqual(try subctl(daemon, "remove", ["DOOMED"]).status, 0)
        XCTAssertEqual(watcher.waitForExit(), 1, "stderr: \(watcher.stderr)")
        XCTAssertTrue(watcher.stderr.contains("subctl: number 'DOOMED' was removed\n"), watcher.stderr)
    }

    /// With --no-reconnect (without it, watch connects again and resumes: SubctlWatchReconnectTests).
    func testWatchNoReconnectExits69WhenTheServerGoesAway() throws {
        let daemon = try startDaemon()
        XCTAssertEqual(try subctl(daemon, "create", ["N", "--retain"]).status, 0)
        let watcher = try watch(daemon, ["N", "--no-reconnect"])
        XCTAssertEqual(daemon.stop(), 0, "subd log:\n\(daemon.log)")
        XCTAssertEqual(watcher.waitForExit(), 69, "stderr: \(watcher.stderr)")
        XCTAssertTrue(watcher.stderr.contains("subctl: lost the connection to"), watcher.stderr)
    }

    func testWatchOfAPlainOrMissingNumberExitsOneAndLeavesNoSubscription() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["PLAIN"]))
        let plain = try subctl(daemon, "watch", ["PLAIN"])
        XCTAssertEqual(plain.status, 1, "\(plain)")
        XCTAssertTrue(plain.stderr.hasPrefix("subctl: 'PLAIN' is not a retained number"), "\(plain)")
        XCTAssertEqual(plain.output, "")
        XCTAssertEqual(try listCounts(try connect(daemon))["PLAIN"], 0, "the watch's SUB was given back")
        let missing = try subctl(daemon, "watch", ["NOPE"])
        XCTAssertEqual(missing.status, 1, "\(missing)")
        XCTAssertTrue(missing.stderr.contains("subctl create NOPE --retain"), "\(missing)")
    }

    /// `subctl list` says which numbers are retained, and their revision; plain ones print as before.
    func testListShowsRetainedNumbersWithTheirRevision() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["A"]))
        XCTAssertEqual(try subctl(daemon, "create", ["P", "--retain"]).status, 0)
        XCTAssertEqual(try subctl(daemon, "create", ["Q", "--retain"]).status, 0)
        for value in ["1", "2"] { XCTAssertEqual(try subctl(daemon, "publish", ["P", value]).status, 0) }
        let subscriber = try connect(daemon, "subscriber")
        XCTAssertEqual(try subscriber.command("SUB P"), .ok())
        let all = try subctl(daemon, "list")
        XCTAssertEqual(all.status, 0, "\(all)")
        XCTAssertEqual(all.lines, ["A 0", "P 1 retained rev 2", "Q 0 retained rev 0"], "\(all)")
        let some = try subctl(daemon, "list", ["P"])
        XCTAssertEqual(some.lines, ["P 1 retained rev 2"], "\(some)")
    }

    private func jsonObject(_ line: [UInt8]) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(line), options: [.fragmentsAllowed])
        return try XCTUnwrap(object as? [String: Any], "not a JSON object: \(describeBytes(line))")
    }
}
