import XCTest

@testable import SubscriptionCluster

/// The other nodes' interest: a publication expects the nodes with a matching pattern that were heard from lately.
final class InterestDirectoryTests: XCTestCase {
    func testThePublicationExpectsTheNodesWhosePatternsMatch() {
        var directory = InterestDirectory()
        XCTAssertTrue(directory.update(origin: "b", patterns: ["SCIENCE.physics"], now: 0))
        directory.update(origin: "c", patterns: ["SCIENCE.>", "NEWS"], now: 0)
        directory.update(origin: "d", patterns: ["*.chemistry"], now: 0)
        XCTAssertEqual(directory.expected(for: "SCIENCE.physics", now: 1), ["b", "c"])
        XCTAssertEqual(directory.expected(for: "SCIENCE.chemistry", now: 1), ["c", "d"])
        XCTAssertEqual(directory.expected(for: "OTHER", now: 1), [])
        XCTAssertFalse(directory.update(origin: "b", patterns: [], now: 2), "b known; now it holds nothing")
        XCTAssertEqual(directory.expected(for: "SCIENCE.physics", now: 3), ["c"])
        XCTAssertTrue(directory.remove(origin: "c"))
        XCTAssertEqual(directory.expected(for: "SCIENCE.physics", now: 3), [])
    }

    func testASilentNodeIsNotExpectedAndIsForgotten() {
        var directory = InterestDirectory()
        directory.update(origin: "b", patterns: ["N"], now: 0)
        directory.update(origin: "c", patterns: ["N"], now: 20_000_000_000)
        let later = InterestDirectory.silence + 1
        XCTAssertEqual(directory.expected(for: "N", now: later), ["c"], "b silent past the limit")
        XCTAssertEqual(directory.expire(now: later), ["b"])
        XCTAssertEqual(directory.nodes.keys.sorted(), ["c"])
    }

    func testAnEntryReadsBackAsWritten() {
        let value = InterestDirectory.encode(["b.>", "A", "$x"])
        XCTAssertEqual(String(decoding: value, as: UTF8.self), "$x\nA\nb.>")
        XCTAssertEqual(InterestDirectory.decode(value), ["$x", "A", "b.>"])
        XCTAssertEqual(InterestDirectory.decode([]), [])
    }

    /// A node's patterns in queue groups expect their group, once, whichever node holds it; they do not expect the
    /// node's plain copy.
    func testPatternsInGroupsExpectTheirGroups() {
        var directory = InterestDirectory()
        let line = InterestDirectory.groupLine(pattern: "JOBS.*", group: "workers")
        XCTAssertEqual(line, "JOBS.* workers")
        directory.update(
            origin: "b", patterns: [line, InterestDirectory.groupLine(pattern: ">", group: "audit")], now: 0)
        directory.update(
            origin: "c", patterns: ["JOBS.a", InterestDirectory.groupLine(pattern: "JOBS.a", group: "workers")], now: 0)
        directory.update(origin: "d", patterns: ["A.. broken", " nopattern"], now: 0)
        XCTAssertEqual(directory.expected(for: "JOBS.a", now: 1), ["c"], "b holds groups only")
        XCTAssertEqual(directory.expectedGroups(for: "JOBS.a", now: 1), ["workers", "audit"])
        XCTAssertEqual(directory.expectedGroups(for: "OTHER", now: 1), ["audit"])
        XCTAssertEqual(directory.expectedGroups(for: "JOBS.a", now: InterestDirectory.silence + 1), [], "silent")
    }

    /// A bucket write (a `REMOVE`, a retained value) reaches every node, and each serves its own members: a node that
    /// holds a matching pattern in a group only is expected as a node.
    func testABucketWriteExpectsTheNodesHoldingAMatchingPatternInGroupsToo() {
        var directory = InterestDirectory()
        directory.update(origin: "b", patterns: [InterestDirectory.groupLine(pattern: "JOBS.*", group: "w")], now: 0)
        directory.update(origin: "c", patterns: ["JOBS.a"], now: 0)
        directory.update(origin: "d", patterns: [InterestDirectory.groupLine(pattern: "OTHER", group: "w")], now: 0)
        XCTAssertEqual(directory.expected(for: "JOBS.a", now: 1), ["c"])
        XCTAssertEqual(directory.expected(for: "JOBS.a", now: 1, includingGroups: true), ["b", "c"])
        XCTAssertEqual(directory.expected(for: "JOBS.b", now: 1, includingGroups: true), ["b"])
        let later = InterestDirectory.silence + 1
        XCTAssertEqual(directory.expected(for: "JOBS.a", now: later, includingGroups: true), [], "silent")
    }

    /// A reading of the clock older than a node's last entry (a publication's shared one) finds the node heard, not
    /// silent by a difference that wraps around; nor does the node expire then.
    func testAReadingOlderThanTheLastEntryFindsTheNodeHeard() {
        var directory = InterestDirectory()
        directory.update(
            origin: "b", patterns: ["N", InterestDirectory.groupLine(pattern: "N", group: "g")], now: 1_000)
        XCTAssertEqual(directory.expected(for: "N", now: 900), ["b"])
        XCTAssertEqual(directory.expectedGroups(for: "N", now: 900), ["g"])
        XCTAssertEqual(directory.expectations(for: "N", now: 900).nodes.nodes, ["b"])
        XCTAssertEqual(directory.expire(now: 900), [])
        XCTAssertEqual(directory.expected(for: "N", now: 1_000 + InterestDirectory.silence), ["b"], "at the edge")
        XCTAssertEqual(directory.expected(for: "N", now: 1_001 + InterestDirectory.silence), [], "silent past it")
    }

    /// The remembered expectations follow every change of the nodes and a node falling silent, and agree with the
    /// uncached answers.
    func testRememberedExpectationsFollowUpdatesAndSilence() {
        // Asked first with no node (nothing can fall silent: remembered for good), then a node comes: it falls
        // silent on time all the same.
        var fresh = InterestDirectory()
        XCTAssertEqual(fresh.expectations(for: "N", now: 1).nodes.nodes, [])
        fresh.update(origin: "b", patterns: ["N"], now: 2)
        XCTAssertEqual(fresh.expectations(for: "N", now: 3).nodes.nodes, ["b"])
        XCTAssertEqual(
            fresh.expectations(for: "N", now: 3 + InterestDirectory.silence).nodes.nodes, [],
            "silent after the first ask")

        var directory = InterestDirectory()
        directory.update(
            origin: "b", patterns: ["N", InterestDirectory.groupLine(pattern: "N", group: "g")], now: 0)
        XCTAssertEqual(directory.expectations(for: "N", now: 1).nodes.nodes, ["b"])
        XCTAssertEqual(directory.expectations(for: "N", now: 2).groups, ["g"])
        directory.update(origin: "c", patterns: ["*"], now: 10)
        XCTAssertEqual(directory.expectations(for: "N", now: 11).nodes.nodes, ["b", "c"], "a new node is seen at once")
        directory.update(origin: "b", patterns: [], now: 12)
        XCTAssertEqual(
            directory.expectations(for: "N", now: 13).nodes.nodes, ["c"], "a node's new entry is seen at once")
        XCTAssertEqual(directory.expectations(for: "N", now: 13).groups, [])
        directory.remove(origin: "c")
        XCTAssertEqual(directory.expectations(for: "N", now: 14).nodes.nodes, [], "a deleted entry is seen at once")
        directory.update(origin: "d", patterns: ["N"], now: 20)
        XCTAssertEqual(directory.expectations(for: "N", now: 21).nodes.nodes, ["d"])
        XCTAssertEqual(
            directory.expectations(for: "N", now: 20 + InterestDirectory.silence + 1).nodes.nodes, [],
            "a node that fell silent is expected no longer, cached or not")
        var generator = SystemRandomNumberGenerator()
        for step in 0..<2_000 {
            // The clock only goes forward, from where the checks above left it.
            let now = 21 + InterestDirectory.silence + UInt64(step) * InterestDirectory.silence / 100
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: directory.update(origin: "n\(step % 5)", patterns: [["N"], ["*"], ["M"], []][step % 4], now: now)
            case 1: directory.remove(origin: "n\(step % 5)")
            default: break
            }
            // Each asked twice in a row (the second answered from the last lookup), then the other.
            for number in ["N", "N", "M", "M"] {
                XCTAssertEqual(
                    Set(directory.expectations(for: number, now: now).nodes.nodes),
                    directory.expected(for: number, now: now))
            }
        }
    }
}
