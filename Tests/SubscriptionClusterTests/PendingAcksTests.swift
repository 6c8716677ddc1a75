import XCTest

@testable import SubscriptionCluster

/// The publications waiting for other nodes' counts: an answer once every expected node confirmed or at the timeout,
/// never a receiver counted twice, and a confirmation after the answer late.
final class PendingAcksTests: XCTestCase {
    private final class Answers: @unchecked Sendable {
        var given: [Int] = []
    }

    func testTheAnswerComesWhenEveryExpectedNodeConfirmed() {
        var pending = PendingAcks()
        let answers = Answers()
        XCTAssertTrue(pending.expect(7, from: ["b", "c"]))
        XCTAssertNil(pending.attach({ answers.given.append($0) }, to: 7))
        guard case .counted = pending.confirm(7, by: "b", receivers: 2) else { return XCTFail("b counted") }
        guard case .duplicate = pending.confirm(7, by: "b", receivers: 2) else { return XCTFail("b once") }
        guard case .counted = pending.confirm(7, by: "x", receivers: 1) else { return XCTFail("unexpected x counted") }
        guard case .complete(let answer, let receivers) = pending.confirm(7, by: "c", receivers: 3) else {
            return XCTFail("c completes it")
        }
        answer(receivers)
        XCTAssertEqual(answers.given, [6], "2 + 1 + 3, b once")
        guard case .late = pending.confirm(7, by: "d", receivers: 1) else { return XCTFail("after the answer: late") }
        XCTAssertEqual(pending.count, 0)
    }

    func testTheTimeoutAnswersWithTheConfirmationsSoFar() {
        var pending = PendingAcks()
        let answers = Answers()
        XCTAssertTrue(pending.expect(1, from: ["b", "c"]))
        XCTAssertNil(pending.attach({ answers.given.append($0) }, to: 1))
        _ = pending.confirm(1, by: "b", receivers: 2)
        guard let (answer, receivers) = pending.expire(1) else { return XCTFail("still waiting") }
        answer?(receivers)
        XCTAssertEqual(answers.given, [2])
        XCTAssertNil(pending.expire(1), "answered once")
        guard case .late = pending.confirm(1, by: "c", receivers: 3) else { return XCTFail("c is late") }
    }

    /// A run confirms each waiting ticket in it once, in order; the others are late. The longest run against few
    /// tickets waiting (matched against those) and a short run against many (counter by counter) count alike.
    func testARunConfirmsTheTicketsWaitingInItAndCountsTheRestLate() {
        for waiting in [[3, 5, 9], Array(0..<2_000)] {
            var pending = PendingAcks()
            let answers = Answers()
            for ticket in waiting {
                XCTAssertTrue(pending.expect(UInt64(ticket), from: ["b"]))
                XCTAssertNil(pending.attach({ answers.given.append(ticket * 10 + $0) }, to: UInt64(ticket)))
            }
            var completed = 0
            let last = BridgeHeaders.maxRun - 1
            let late = pending.confirm(run: 4, through: last, by: "b", group: nil, receivers: 2) { answer, total in
                completed += 1
                answer(total)
            }
            let inRun = waiting.filter { $0 >= 4 }
            XCTAssertEqual(completed, inRun.count)
            XCTAssertEqual(answers.given, inRun.map { $0 * 10 + 2 }, "in ticket order, 2 receivers each")
            XCTAssertEqual(late, Int(last - 4 + 1) - inRun.count)
            XCTAssertEqual(pending.count, waiting.count - inRun.count)
            XCTAssertEqual(
                pending.confirm(run: 0, through: 9, by: "b", group: nil, receivers: 1) { _, _ in },
                10 - (waiting.count - inRun.count),
                "the ones before the first run complete now; the rest are late")
        }
    }

    /// Receivers as large as a line may carry, from any number of nodes, saturate instead of overflowing.
    func testTheReceiversOfOneAnswerSaturate() {
        var pending = PendingAcks()
        let answers = Answers()
        XCTAssertTrue(pending.expect(1, from: ["last"]))
        XCTAssertNil(pending.attach({ answers.given.append($0) }, to: 1))
        let most = Int(BridgeHeaders.maxReceivers)
        for node in 0..<600 { _ = pending.confirm(1, by: "n\(node)", receivers: most) }
        guard case .complete(let answer, let total) = pending.confirm(1, by: "last", receivers: most) else {
            return XCTFail("complete")
        }
        answer(total)
        XCTAssertEqual(answers.given, [PendingAcks.maxReceivers])
        XCTAssertNil(BridgeHeaders.decodeConfirmations(Array("1 n \(most + 1)".utf8)), "past the most one line carries")
        XCTAssertEqual(BridgeHeaders.decodeConfirmations(Array("1 n \(most)".utf8))?.first?.receivers, most)
    }

    /// Deadlines of publications answered before their timeout do not pile up: past twice those waiting (and the
    /// slack) they are dropped, the waiting ones kept in order.
    func testTheDeadlinesOfAnsweredPublicationsDoNotPileUp() {
        var acks = ClusterAcks()
        for ticket in UInt64(1)...50_000 {
            XCTAssertTrue(acks.pending.expect(ticket, from: ["b"]))
            XCTAssertNil(acks.pending.attach({ _ in }, to: ticket))
            acks.addDeadline(of: ticket, at: ticket)
            // Every tenth waits on; the others are answered at once.
            if ticket % 10 != 0 { _ = acks.pending.confirm(ticket, by: "b", receivers: 1) }
            // Checked before each append, and one answer since: at most two past the bound.
            XCTAssertLessThanOrEqual(acks.deadlines.count, 2 * acks.pending.count + ClusterAcks.deadlinesSlack + 2)
        }
        XCTAssertEqual(acks.pending.count, 5_000)
        let kept = acks.deadlines.map(\.ticket).filter { acks.pending.isWaiting($0) }
        XCTAssertTrue(kept == (1...5_000).map { UInt64($0 * 10) }, "every waiting one kept, in order")
    }

    /// The sweep's timer is set for the first publication still waiting: the answered ones before it are taken out
    /// (none that waits, and the order kept); with none waiting, none is left.
    func testAnsweredDeadlinesAtTheFrontAreTakenOut() {
        var acks = ClusterAcks()
        for ticket in UInt64(1)...10 {
            XCTAssertTrue(acks.pending.expect(ticket, from: ["b"]))
            XCTAssertNil(acks.pending.attach({ _ in }, to: ticket))
            acks.addDeadline(of: ticket, at: 100 + ticket)
        }
        for ticket in [1, 2, 3, 5, 6] as [UInt64] { _ = acks.pending.confirm(ticket, by: "b", receivers: 1) }
        acks.dropAnsweredDeadlines()
        XCTAssertEqual(acks.deadlines.map(\.ticket), [4, 5, 6, 7, 8, 9, 10], "up to the first waiting one only")
        XCTAssertEqual(acks.deadlines.first?.deadline, 104)
        acks.dropAnsweredDeadlines()
        XCTAssertEqual(acks.deadlines.count, 7, "a waiting front stays")
        for ticket in [4, 7, 8, 9, 10] as [UInt64] { _ = acks.pending.confirm(ticket, by: "b", receivers: 1) }
        acks.dropAnsweredDeadlines()
        XCTAssertTrue(acks.deadlines.isEmpty, "nothing waits: no sweep is needed")
        // A deadline before the last one's is moved up to it: the front stays the earliest.
        acks.addDeadline(of: 11, at: 500)
        acks.addDeadline(of: 12, at: 490)
        acks.addDeadline(of: 13, at: 510)
        XCTAssertEqual(acks.deadlines.map(\.deadline), [500, 500, 510])
    }

    /// A turn's publications share a reading of the clock, at most ``ClusterAcks/clockShares`` of them; the next
    /// turn reads it again.
    func testPublicationsShareAReadingOfTheClockWithinATurn() {
        var acks = ClusterAcks()
        let first = acks.publicationClock()
        // The monotonic clock moves in nanoseconds: a reading taken after a pause differs from the first.
        usleep(2_000)
        for _ in 1..<ClusterAcks.clockShares { XCTAssertEqual(acks.publicationClock(), first, "shared") }
        let second = acks.publicationClock()
        XCTAssertGreaterThan(second, first, "read again after clockShares publications")
        usleep(2_000)
        XCTAssertEqual(acks.publicationClock(), second)
        acks.endPublicationTurn()
        let third = acks.publicationClock()
        XCTAssertGreaterThan(third, second, "read again in the next turn")
        XCTAssertLessThanOrEqual(third, ClusterAcks.now())
    }

    func testAtTheLimitAPublicationDoesNotWait() {
        var pending = PendingAcks()
        for ticket in 0..<UInt64(PendingAcks.limit) { XCTAssertTrue(pending.expect(ticket, from: ["b"])) }
        XCTAssertFalse(pending.expect(UInt64(PendingAcks.limit), from: ["b"]))
    }

    func testAConfirmationReadsBackAsWritten() {
        var payload: [UInt8] = []
        BridgeHeaders.appendConfirmation(counter: 17, origin: "node2-3k9", receivers: 4, to: &payload)
        XCTAssertEqual(String(decoding: payload, as: UTF8.self), "17 node2-3k9 4")
        XCTAssertEqual(
            BridgeHeaders.decodeConfirmations(payload), [.init(counter: 17, origin: "node2-3k9", receivers: 4)])
        var group: [UInt8] = []
        BridgeHeaders.appendConfirmation(counter: 17, origin: "node2-3k9", receivers: 1, group: "workers", to: &group)
        XCTAssertEqual(String(decoding: group, as: UTF8.self), "17 node2-3k9 1 workers")
        XCTAssertEqual(BridgeHeaders.decodeConfirmations(group)?.first?.group, "workers")
        for bad in [
            "17 node2 -1", "17 node2", "17 node2 1 g h", "", "x node2 1", "17  1", "17 node2 1 ", "17 node2 +1",
            "17 node2 99999999999999999999", "17 node2 1\n", "\n17 node2 1",
        ] {
            XCTAssertNil(BridgeHeaders.decodeConfirmations(Array(bad.utf8)), bad)
        }
    }

    /// Consecutive counters with the same receivers and copy make one run, one line; anything else starts another.
    func testRunsOfConfirmationsCollapseIntoOneLineEach() {
        var batch = ConfirmationBatch()
        for counter in UInt64(10)...20 { batch.add(counter, receivers: 5, group: nil) }
        batch.add(21, receivers: 4, group: nil)
        batch.add(22, receivers: 4, group: "g")
        batch.add(23, receivers: 4, group: "g")
        batch.add(25, receivers: 4, group: "g")
        let payload = batch.encode(origin: "n2")
        XCTAssertEqual(String(decoding: payload, as: UTF8.self), "10-20 n2 5\n21 n2 4\n22-23 n2 4 g\n25 n2 4 g")
        XCTAssertEqual(
            BridgeHeaders.decodeConfirmations(payload),
            [
                .init(counter: 10, last: 20, origin: "n2", receivers: 5),
                .init(counter: 21, origin: "n2", receivers: 4),
                .init(counter: 22, last: 23, origin: "n2", receivers: 4, group: "g"),
                .init(counter: 25, origin: "n2", receivers: 4, group: "g"),
            ])
        for bad in ["5-5 n 1", "6-5 n 1", "1- n 1", "-3 n 1", "1-2-3 n 1", "0-\(BridgeHeaders.maxRun) n 1"] {
            XCTAssertNil(BridgeHeaders.decodeConfirmations(Array(bad.utf8)), bad)
        }
        XCTAssertEqual(
            BridgeHeaders.decodeConfirmations(Array("0-\(BridgeHeaders.maxRun - 1) n 1".utf8))?.first?.last,
            BridgeHeaders.maxRun - 1, "the longest run")
    }

    /// One turn's confirmations to one node travel in one message, one per line, and read back in order.
    func testABatchOfConfirmationsReadsBackInOrder() {
        var batch: [UInt8] = []
        let sent: [BridgeHeaders.Confirmation] = (0..<300).map {
            .init(counter: UInt64($0) * 7_919, origin: "n\($0 % 3)", receivers: $0 % 5, group: $0 % 4 == 0 ? "g" : nil)
        }
        for confirmation in sent {
            BridgeHeaders.appendConfirmation(
                counter: confirmation.counter, origin: confirmation.origin, receivers: confirmation.receivers,
                group: confirmation.group, to: &batch)
        }
        XCTAssertEqual(BridgeHeaders.decodeConfirmations(batch), sent)
        // One bad line spoils the batch: no node sent it.
        XCTAssertNil(BridgeHeaders.decodeConfirmations(batch + Array("\n1 n 1 g h".utf8)))
    }

    /// A node's plain copy and its groups' copies serve different sessions: each is counted once; only the plain one
    /// is waited for.
    func testAPlainAndAGroupConfirmationOfOneNodeAreBothCounted() {
        var pending = PendingAcks()
        XCTAssertTrue(pending.expect(9, from: ["b"]))
        XCTAssertNil(pending.attach({ _ in }, to: 9))
        guard case .counted = pending.confirm(9, by: "b", group: "g", receivers: 1) else {
            return XCTFail("b's group copy counted, b's plain copy still awaited")
        }
        guard case .duplicate = pending.confirm(9, by: "b", group: "g", receivers: 1) else {
            return XCTFail("the same group copy once")
        }
        guard case .counted = pending.confirm(9, by: "c", group: "g", receivers: 1) else {
            return XCTFail("another node's copy of the group (another pattern) counted")
        }
        guard case .complete(_, let receivers) = pending.confirm(9, by: "b", receivers: 2) else {
            return XCTFail("b's plain copy completes the wait")
        }
        XCTAssertEqual(receivers, 4)
    }

    /// An expected group is met by its first copy's confirmation, from any node; a second node's copy of the group
    /// (another pattern) is still counted while the answer waits.
    func testAnExpectedGroupIsMetByAnyNode() {
        var pending = PendingAcks()
        XCTAssertTrue(pending.expect(3, from: [], groups: ["workers", "audit"]))
        XCTAssertNil(pending.attach({ _ in }, to: 3))
        guard case .counted = pending.confirm(3, by: "c", group: "workers", receivers: 1) else {
            return XCTFail("workers met; audit still awaited")
        }
        guard case .counted = pending.confirm(3, by: "b", group: "workers", receivers: 1) else {
            return XCTFail("b's copy of workers counted too")
        }
        guard case .complete(_, let receivers) = pending.confirm(3, by: "b", group: "audit", receivers: 1) else {
            return XCTFail("audit completes the wait")
        }
        XCTAssertEqual(receivers, 3)
        XCTAssertTrue(pending.expect(4, from: [], groups: ["g"]))
        _ = pending.confirm(4, by: "b", group: "g", receivers: 0)
        XCTAssertEqual(pending.attach({ _ in }, to: 4), 0, "met before the answer was attached: answered at once")
    }

    /// Tickets rise: one not above the last expected is refused; a wait found again by a binary search among
    /// thousands, whichever order their answers come in.
    func testTicketsRiseAndAreFoundAmongMany() {
        var pending = PendingAcks()
        XCTAssertTrue(pending.expect(10, from: ["b"]))
        XCTAssertFalse(pending.expect(10, from: ["b"]), "the same ticket again")
        XCTAssertFalse(pending.expect(9, from: ["b"]), "a ticket below the last")
        var generator = SystemRandomNumberGenerator()
        let tickets = (1...3_000).map { UInt64(10 + $0 * 3) }
        for ticket in tickets { XCTAssertTrue(pending.expect(ticket, from: ["b"])) }
        for ticket in tickets.shuffled(using: &generator) {
            XCTAssertTrue(pending.isWaiting(ticket))
            XCTAssertFalse(pending.isWaiting(ticket + 1), "no such ticket")
            guard case .complete = pending.confirm(ticket, by: "b", receivers: 1) else {
                // Not attached: counted, answered at attach.
                XCTAssertEqual(pending.attach({ _ in }, to: ticket), 1)
                continue
            }
            XCTFail("complete before its answer was attached")
        }
        XCTAssertEqual(pending.count, 1, "ticket 10 waits")
        XCTAssertLessThanOrEqual(pending.heldCount, 2 * pending.count + 1_024)
    }

    /// A wait that lasts (a bucket write waits for the bucket's answer) does not keep the thousands answered after
    /// it: they are taken out once they are more than half.
    func testALongWaitAtTheFrontDoesNotKeepThoseAnsweredBehindIt() {
        var pending = PendingAcks()
        XCTAssertTrue(pending.expect(1, from: ["b", "c"]))
        var answered = 0
        for ticket in UInt64(2)...100_000 {
            XCTAssertTrue(pending.expect(ticket, from: ["b"]))
            XCTAssertNil(pending.attach({ _ in }, to: ticket))
            let late = pending.confirm(run: ticket, through: ticket, by: "b", group: nil, receivers: 2) { _, total in
                XCTAssertEqual(total, 2)
                answered += 1
            }
            XCTAssertEqual(late, 0)
            XCTAssertLessThanOrEqual(pending.heldCount, 2 * pending.count + 1_024 + 1)
        }
        XCTAssertEqual(answered, 99_999)
        XCTAssertEqual(pending.count, 1)
        XCTAssertTrue(pending.isWaiting(1), "the first still waits, and is found")
        guard case .counted = pending.confirm(1, by: "b", receivers: 1) else { return XCTFail("b counted") }
        XCTAssertNil(pending.attach({ _ in }, to: 1))
        guard case .complete(_, let receivers) = pending.confirm(1, by: "c", receivers: 1) else {
            return XCTFail("c completes it")
        }
        XCTAssertEqual(receivers, 2)
        XCTAssertEqual(pending.heldCount, 0)
    }

    /// One run of confirmations across publications to different numbers (each its own expectation): each entry
    /// counts the node by its own expected nodes, whatever the one before expected.
    func testARunAcrossDifferentExpectationsCountsEachByItsOwn() {
        var pending = PendingAcks()
        let onlyB = PendingAcks.Expectation(["b"])
        let bAndC = PendingAcks.Expectation(["c", "b"])
        let onlyC = PendingAcks.Expectation(["c"])
        let expectations = [onlyB, bAndC, onlyC, bAndC, onlyB]
        for (index, expectation) in expectations.enumerated() {
            let ticket = UInt64(index + 1)
            XCTAssertTrue(pending.expect(ticket, from: expectation))
            XCTAssertNil(pending.attach({ _ in }, to: ticket))
        }
        var completed: [Int] = []
        _ = pending.confirm(run: 1, through: 5, by: "b", group: nil, receivers: 3) { _, total in completed.append(total)
        }
        XCTAssertEqual(completed, [3, 3], "tickets 1 and 5 expected only b")
        XCTAssertEqual(pending.count, 3)
        completed = []
        _ = pending.confirm(run: 1, through: 5, by: "c", group: nil, receivers: 1) { _, total in completed.append(total)
        }
        XCTAssertEqual(completed, [4, 4, 4], "2 and 4 had b's 3; 3 counted b's too (not expected, before the answer)")
        XCTAssertEqual(pending.count, 0)
    }
}
