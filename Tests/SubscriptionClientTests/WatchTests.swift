import SubscriptionWire
import XCTest

@testable import SubscriptionClient

/// `watch(number)`: the changes of a retained number as (old, new) pairs, against a scripted server, and the state
/// that makes them.
final class WatchTests: XCTestCase {
    /// Starts `watch` and plays the server: `SUB <number>` answered with `subAnswer` (the current value's push and
    /// `+OK`), then `GET <number>` answered with `getAnswer`.
    private func startWatch(
        _ number: String = "X", subAnswer: String, getAnswer: String,
        _ watch: @escaping @Sendable (SubscriptionClient) async throws -> Watch = { try await $0.watch("X") }
    ) async throws -> (Watch, ScriptedPeer, SubscriptionClient) {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let started = Task { try await watch(client) }
        try await peer.expectLine("SUB \(number)")
        peer.send(subAnswer)
        try await peer.expectLine("GET \(number)")
        peer.send(getAnswer)
        return (try await started.value, peer, client)
    }

    private func value(_ text: String, _ revision: Int, from: String? = nil, info: [InfoPair] = []) -> RetainedValue {
        RetainedValue(number: "X", payload: Array(text.utf8), revision: revision, from: from, info: info)
    }

    private func changes(of watch: Watch) async throws -> [Watch.Change] {
        var all: [Watch.Change] = []
        for try await change in watch { all.append(change) }
        return all
    }

    func testFirstValueThenChangesAsOldNewPairs() async throws {
        let (watch, peer, _) = try await startWatch(
            subAnswer: "MSG X 2 rev=1\nv1\n+OK\n", getAnswer: "MSG X 2 rev=1\nv1\n+OK 1\n")
        XCTAssertEqual(watch.number, "X")
        peer.send("MSG X 2 from=lab rev=2 unit=EUR\nv2\nMSG X 2 rev=3\nv3\nGONE X\n")
        let all = try await changes(of: watch)
        let v1 = value("v1", 1)
        let v2 = value("v2", 2, from: "lab", info: [InfoPair(key: "unit", value: "EUR")])
        let v3 = value("v3", 3)
        XCTAssertEqual(
            all,
            [
                Watch.Change(old: nil, new: v1), Watch.Change(old: v1, new: v2), Watch.Change(old: v2, new: v3),
            ], "the GET's push is no change; GONE ends the watch")
        XCTAssertEqual(all[1].revision, 2)
        XCTAssertEqual(all[1].from, "lab")
        XCTAssertEqual(all[1].info, ["unit": "EUR"])
        XCTAssertEqual(all[1].infoPairs, [InfoPair(key: "unit", value: "EUR")])
        XCTAssertNil(all[1].gap)
    }

    /// Nothing published yet: the server pushes nothing on SUB and GET says `+OK 0`; the first publication is the
    /// first change.
    func testNumberWithNothingPublishedPushesNothing() async throws {
        let (watch, peer, _) = try await startWatch(subAnswer: "+OK\n", getAnswer: "+OK 0\n")
        peer.send("MSG X 5 rev=1\nfirst\nGONE X\n")
        let all = try await changes(of: watch)
        XCTAssertEqual(all, [Watch.Change(old: nil, new: value("first", 1))])
    }

    func testGapIsReported() async throws {
        let (watch, peer, _) = try await startWatch(
            subAnswer: "MSG X 2 rev=1\nv1\n+OK\n", getAnswer: "MSG X 2 rev=1\nv1\n+OK 1\n")
        peer.send("MSG X 2 rev=4\nv4\nMSG X 2 rev=5\nv5\nMSG X 2 rev=2\nw2\nGONE X\n")
        let all = try await changes(of: watch)
        XCTAssertEqual(
            all,
            [
                Watch.Change(old: nil, new: value("v1", 1)),
                Watch.Change(old: value("v1", 1), new: value("v4", 4), gap: .missed(2...3)),
                Watch.Change(old: value("v4", 4), new: value("v5", 5)),
                Watch.Change(old: value("v5", 5), new: value("w2", 2), gap: .wentBack(from: 5)),
            ])
        XCTAssertEqual(all[1].gap?.missedCount, 2)
        XCTAssertNil(all[3].gap?.missedCount, "how much was missed cannot be told")
    }

    /// The client was cut off and came back: resumed after the last value it had, the first change has that value as
    /// old and reports the revisions missed since.
    func testResumedWatchReportsWhatWasMissedSinceTheLastValue() async throws {
        let last = value("v3", 3)
        let (watch, peer, _) = try await startWatch(
            subAnswer: "MSG X 2 rev=6\nv6\n+OK\n", getAnswer: "MSG X 2 rev=6\nv6\n+OK 6\n",
            { try await $0.watch("X", after: last) })
        peer.send("MSG X 2 rev=7\nv7\nGONE X\n")
        let all = try await changes(of: watch)
        XCTAssertEqual(
            all,
            [
                Watch.Change(old: last, new: value("v6", 6), gap: .missed(4...5)),
                Watch.Change(old: value("v6", 6), new: value("v7", 7)),
            ])
    }

    /// Resumed while the number still has the value the client had: nothing to report until it changes.
    func testResumedWatchWithNothingNewWaitsForTheNextChange() async throws {
        let last = value("v3", 3)
        let (watch, peer, _) = try await startWatch(
            subAnswer: "MSG X 2 rev=3\nv3\n+OK\n", getAnswer: "MSG X 2 rev=3\nv3\n+OK 3\n",
            { try await $0.watch("X", after: last) })
        peer.send("MSG X 2 rev=4\nv4\nGONE X\n")
        let all = try await changes(of: watch)
        XCTAssertEqual(all, [Watch.Change(old: last, new: value("v4", 4))])
    }

    func testWatchAfterARevisionLearnsTheValueAtThatRevision() async throws {
        let (watch, peer, _) = try await startWatch(
            subAnswer: "MSG X 2 rev=2\nv2\n+OK\n", getAnswer: "MSG X 2 rev=2\nv2\n+OK 2\n",
            { try await $0.watch("X", afterRevision: 2) })
        peer.send("MSG X 2 rev=3\nv3\nGONE X\n")
        let all = try await changes(of: watch)
        XCTAssertEqual(all, [Watch.Change(old: value("v2", 2), new: value("v3", 3))])

        let (later, laterPeer, _) = try await startWatch(
            subAnswer: "MSG X 2 rev=5\nv5\n+OK\n", getAnswer: "MSG X 2 rev=5\nv5\n+OK 5\n",
            { try await $0.watch("X", afterRevision: 2) })
        laterPeer.send("GONE X\n")
        let laterChanges = try await changes(of: later)
        XCTAssertEqual(laterChanges, [Watch.Change(old: nil, new: value("v5", 5), gap: .missed(3...4))])
    }

    /// A plain number has no revisions: GET refuses it with PROTO, and the watch's subscription is given back.
    func testPlainNumberIsRefusedAndUnsubscribed() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let started = Task { try await client.watch("PLAIN") }
        try await peer.expectLine("SUB PLAIN")
        peer.send("+OK\n")
        try await peer.expectLine("GET PLAIN")
        peer.send("-ERR PROTO 'PLAIN' is not a retained number\n")
        await assertThrowsClientError(
            try await started.value, .server(code: .proto, message: "'PLAIN' is not a retained number"))
        try await peer.expectLine("UNSUB PLAIN")
    }

    func testMissingNumberIsRefusedWithoutAGet() async throws {
        let (client, peer) = try await ScriptedPeer.connectedClient()
        let started = Task { try await client.watch("NOPE") }
        try await peer.expectLine("SUB NOPE")
        peer.send("-ERR NOTFOUND no subscription number 'NOPE' (CREATE it first)\n")
        await assertThrowsClientError(
            try await started.value,
            .server(code: .notFound, message: "no subscription number 'NOPE' (CREATE it first)"))
        let pinged = Task { try await client.ping() }
        try await peer.expectLine("PING")
        peer.send("+PONG\n")
        _ = try await pinged.value
        await assertThrowsClientError(try await client.watch("A.>"), .invalidName("A.>", .wildcardInNumber))
        await assertThrowsClientError(
            try await client.watch("X", afterRevision: -1), .invalidArgument("a revision is never negative (got -1)"))
    }

    func testLostConnectionEndsTheWatchWithAnError() async throws {
        let (watch, peer, _) = try await startWatch(subAnswer: "+OK\n", getAnswer: "+OK 0\n")
        peer.send("MSG X 2 rev=1\nv1\n")
        var iterator = watch.makeAsyncIterator()
        let first = try await iterator.next()
        XCTAssertEqual(first, Watch.Change(old: nil, new: value("v1", 1)))
        peer.hangUp()
        do {
            _ = try await iterator.next()
            XCTFail("the watch did not end with an error")
        } catch {
            XCTAssertEqual(error, .connectionLost)
        }
    }

    func testMessageWithoutRevisionIsAViolation() async throws {
        let (watch, peer, _) = try await startWatch(subAnswer: "+OK\n", getAnswer: "+OK 0\n")
        peer.send("MSG X 1\nz\n")
        var iterator = watch.makeAsyncIterator()
        do {
            _ = try await iterator.next()
            XCTFail("no error")
        } catch {
            XCTAssertEqual(error, .protocolViolation("a MSG of the retained number 'X' came without rev="))
        }
    }

    func testCancelledWatchUnsubscribes() async throws {
        let (watch, peer, _) = try await startWatch(subAnswer: "+OK\n", getAnswer: "+OK 0\n")
        let watching = Task {
            var count = 0
            for try await _ in watch { count += 1 }
            return count
        }
        watching.cancel()
        let seen = try await watching.value
        XCTAssertEqual(seen, 0)
        try await peer.expectLine("UNSUB X")
    }

    // MARK: - The state alone

    func testStateTable() {
        let v = { (revision: Int) in self.value("v\(revision)", revision) }
        // (start, received revisions, expected (old revision, new revision, gap) per reported change)
        let cases: [(WatchState, [RetainedValue], [(Int?, Int, Watch.Gap?)])] = [
            (WatchState(after: nil), [v(1), v(2), v(3)], [(nil, 1, nil), (1, 2, nil), (2, 3, nil)]),
            (WatchState(after: nil), [v(7), v(8)], [(nil, 7, nil), (7, 8, nil)]),
            (WatchState(after: nil), [v(1), v(1), v(2)], [(nil, 1, nil), (1, 2, nil)]),
            (WatchState(after: nil), [v(1), v(3)], [(nil, 1, nil), (1, 3, .missed(2...2))]),
            (WatchState(after: nil), [v(5), v(1)], [(nil, 5, nil), (5, 1, .wentBack(from: 5))]),
            (WatchState(after: nil), [v(2), value("other", 2)], [(nil, 2, nil), (2, 2, .wentBack(from: 2))]),
            (WatchState(after: v(4)), [v(4), v(5)], [(4, 5, nil)]),
            (WatchState(after: v(4)), [v(9)], [(4, 9, .missed(5...8))]),
            (WatchState(afterRevision: 0), [v(1)], [(nil, 1, nil)]),
            (WatchState(afterRevision: 0), [v(3)], [(nil, 3, .missed(1...2))]),
            (WatchState(afterRevision: 3), [v(3), v(4)], [(3, 4, nil)]),
            (WatchState(afterRevision: 3), [v(2)], [(nil, 2, .wentBack(from: 3))]),
        ]
        for (index, (start, received, expected)) in cases.enumerated() {
            var state = start
            let changes = received.compactMap { state.receive($0) }
            XCTAssertEqual(changes.map(\.old?.revision), expected.map(\.0), "case \(index): old")
            XCTAssertEqual(changes.map(\.new.revision), expected.map(\.1), "case \(index): new")
            XCTAssertEqual(changes.map(\.gap), expected.map(\.2), "case \(index): gap")
            XCTAssertEqual(state.current, received.last, "case \(index): the latest value is kept")
        }
    }
}
